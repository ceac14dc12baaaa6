package main

// hgfs debugcomplete, as hg's: the names shell completion offers, taken
// from the command table (and [alias]) at the time of asking, so the
// completion scripts in contrib/completion never drift from hgfs help.

import (
	"context"
	"sort"
	"strings"
)

func init() {
	register(&command{
		name:     "debugcomplete",
		synopsis: "[-o] CMD",
		help: `returns the completion list associated with the given command

Without -o, the commands (and [alias] entries) starting with CMD, debug
commands only when nothing else matches, as hg debugcomplete. With -o,
the options of CMD and the global options ("-x" and "--long" forms).
contrib/completion's bash and zsh scripts ask it.`,
		options: []option{
			{'o', "options", optBool, "", "show the command options"},
		},
		norepo: true,
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) > 1 {
				return &usageError{"invalid arguments"}
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			aliases := commandAliases(c.ui.cfg)
			if c.opts.Bool("options") {
				tables := [][]option{globalOptions}
				if name != "" {
					cmd, alias, err := resolveCommand(name, aliases)
					if err != nil {
						return err
					}
					if alias != nil {
						if cmd, _, err = alias.expand(nil); err != nil {
							return err
						}
					}
					tables = append(tables, cmd.options)
				}
				for _, t := range tables {
					for _, o := range t {
						if strings.Contains(o.help, "(DEPRECATED)") {
							continue
						}
						if o.short != 0 {
							c.ui.write("-%c\n", o.short)
						}
						c.ui.write("--%s\n", o.long)
					}
				}
				return nil
			}
			for _, n := range completeCommands(name, aliases, c.ui.verbose) {
				c.ui.write("%s\n", n)
			}
			return nil
		},
	})
}

// completeCommands is hg's findpossible over the command table and
// aliases, as debugcomplete lists it: for each command, the first of its
// names starting with prefix (all its names, blank separated, when
// verbose).
func completeCommands(prefix string, aliases map[string]string, verbose bool) []string {
	type entry struct{ names []string }
	var table []entry
	seen := map[*command]bool{}
	for _, c := range commands {
		if seen[c] {
			continue
		}
		seen[c] = true
		if _, shadowed := aliases[c.name]; shadowed {
			continue
		}
		table = append(table, entry{append([]string{c.name}, c.aliases...)})
	}
	for a := range aliases {
		table = append(table, entry{[]string{a}})
	}
	var choice, debug []string
	for _, e := range table {
		found := ""
		for _, n := range e.names {
			if n == prefix {
				found = n
				break
			}
		}
		if found == "" {
			for _, n := range e.names {
				if strings.HasPrefix(n, prefix) {
					found = n
					break
				}
			}
		}
		if found == "" {
			continue
		}
		if verbose {
			found = strings.Join(e.names, " ")
		}
		if strings.HasPrefix(e.names[0], "debug") || strings.HasPrefix(found, "debug") {
			debug = append(debug, found)
		} else {
			choice = append(choice, found)
		}
	}
	if len(choice) == 0 {
		choice = debug
	}
	sort.Strings(choice)
	return choice
}
