package main

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/internal/tune"
)

// helpTopic is what "hgfs help NAME" describes: a command, reached by
// name (its own, one of its aliases or a prefix) or through an [alias].
type helpTopic struct {
	name  string // as hg prints it: the command's name, or the alias's
	cmd   *command
	alias *aliasDef
}

// synopsisLine is "hgfs NAME SYNOPSIS", without a trailing blank when the
// command takes no arguments.
func (t *helpTopic) synopsisLine() string {
	return strings.TrimRight("hgfs "+t.name+" "+t.cmd.synopsis, " ")
}

func helpCommand(u *ui, t *helpTopic) int {
	if t != nil {
		u.write("%s\n\n", t.synopsisLine())
		if t.alias != nil {
			u.write("alias for: hgfs %s\n\n", t.alias.definition)
		}
		u.write("%s\n", strings.TrimRight(t.cmd.help, "\n"))
		if len(t.cmd.options) > 0 {
			u.write("\n%s\n\n", optionsHeading(t.cmd.options))
			printOptions(u, t.cmd.options)
		}
		if u.verbose {
			u.write("\nglobal options ([+] can be repeated):\n\n")
			printOptions(u, globalOptions)
		} else {
			u.write("\n(some details hidden, use --verbose to show complete help)\n")
		}
		return 0
	}
	u.write("hgfs - Mercurial stores, fast: mount, stream-clone, serve, inspect\n\nlist of commands:\n\n")
	for _, n := range commandNames() {
		summary, _, _ := strings.Cut(commands[n].help, "\n")
		u.write(" %-16s %s\n", n, summary)
	}
	u.write("\nglobal options:\n\n")
	printOptions(u, globalOptions)
	u.write("\nenvironment:\n\n")
	u.write("    %-22s %s\n", tune.EnvVar, "performance tricks to switch off or on, e.g. -yield,-uring (all but schedbatch are on by default)")
	u.write("    %-22s %s\n", "", "tricks: "+strings.Join(tune.Names(), ", ")+"; see docs/ARCHITECTURE.md")
	u.write("    %-22s %s\n", "HGFS_DEBUG", "if set, a panic recovered from a damaged cache is logged with its stack")
	return 0
}

// usage reports a command-line mistake as hg's dispatch does: "hgfs
// NAME: msg" on stderr, then the command's short help on stdout, exit
// status 255.
func (u *ui) usage(t *helpTopic, err error) int {
	u.errorf("hgfs %s: %v\n", t.name, err)
	u.write("%s\n\n", t.synopsisLine())
	if t.alias != nil {
		u.write("alias for: hgfs %s\n\n", t.alias.definition)
	} else {
		summary, _, _ := strings.Cut(t.cmd.help, "\n")
		u.write("%s\n\n", summary)
	}
	if len(t.cmd.options) > 0 {
		u.write("%s\n\n", optionsHeading(t.cmd.options))
		printOptions(u, t.cmd.options)
		u.write("\n")
	}
	u.write("(use 'hgfs %s -h' to show more help)\n", t.name)
	u.out.Flush()
	return 255
}

// optionsHeading is hg's: it mentions [+] when an option repeats.
func optionsHeading(table []option) string {
	for _, op := range table {
		if op.kind == optList {
			return "options ([+] can be repeated):"
		}
	}
	return "options:"
}

// commandNames lists the commands by their own names (not aliases),
// sorted: "hgfs help", the man page.
func commandNames() []string {
	var names []string
	for n, c := range commands {
		if n == c.name {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func printOptions(u *ui, table []option) {
	for _, op := range table {
		flag := "   "
		if op.short != 0 {
			flag = " -" + string(op.short)
		}
		name := "--" + op.long
		switch op.kind {
		case optString, optList:
			name += " VALUE"
		case optInt:
			name += " NUM"
		}
		suffix := ""
		if op.kind == optList {
			suffix = " [+]"
		}
		u.write("%s %-22s %s%s\n", flag, name, op.help, suffix)
	}
}

func init() {
	register(&command{
		name:     "help",
		synopsis: "[COMMAND]",
		help:     "show help for a command or the list of commands",
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) == 0 {
				helpCommand(c.ui, nil)
				return nil
			}
			cmd, alias, err := resolveCommand(args[0], commandAliases(c.ui.cfg))
			if err != nil {
				return err
			}
			t := &helpTopic{cmd: cmd, alias: alias}
			if alias != nil {
				t.name = alias.name
				if t.cmd, _, err = alias.expand(nil); err != nil {
					var ce *configError
					if errors.As(err, &ce) {
						return err
					}
					// Too few arguments: the help still names the command.
					words, _ := shellSplit(alias.definition)
					if t.cmd, err = findCommand(words[0]); err != nil {
						return err
					}
				}
			} else {
				t.name = cmd.name
			}
			helpCommand(c.ui, t)
			return nil
		},
	})
}
