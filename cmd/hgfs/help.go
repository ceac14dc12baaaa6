package main

import (
	"context"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/internal/tune"
)

func helpCommand(u *ui, cmd *command) int {
	if cmd != nil {
		u.write("hgfs %s %s\n\n%s\n", cmd.name, cmd.synopsis, strings.TrimRight(cmd.help, "\n"))
		if len(cmd.options) > 0 {
			u.write("\noptions:\n\n")
			printOptions(u, cmd.options)
		}
		if u.verbose {
			u.write("\nglobal options:\n\n")
			printOptions(u, globalOptions)
		} else {
			u.write("\n(some details hidden, use --verbose to show complete help)\n")
		}
		return 0
	}
	u.write("hgfs - Mercurial stores, fast: mount, stream-clone, serve, inspect\n\nlist of commands:\n\n")
	var names []string
	for n, c := range commands {
		if n == c.name {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
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
			cmd, err := findCommand(args[0])
			if err != nil {
				return err
			}
			helpCommand(c.ui, cmd)
			return nil
		},
	})
}
