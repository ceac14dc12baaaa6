package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/hgfs/hgfs/config"
)

// Command aliases, as hg's [alias] section defines them: "name = command
// [args]" makes "hgfs name ARGS" run "hgfs command args ARGS", with $1,
// $2... in the definition replaced by (and taken out of) the arguments
// given. Aliases join the command table: they shadow a command of the
// same name and take part in prefix matching and in "did you mean"
// suggestions. An alias names a built-in command (not another alias).
// Shell aliases ("!command") are refused by name: hgfs does not run shell
// commands from its configuration.

// configError is hg's ConfigError: "config error: msg" and exit 255.
type configError struct{ msg, hint string }

func (e *configError) Error() string { return e.msg }

// aliasDef is one [alias] entry.
type aliasDef struct {
	name, definition string
}

// commandAliases lists cfg's [alias] entries, without the "name:doc"
// style sub-items hg also reads. Plain mode (HGPLAIN or HGPLAINEXCEPT
// set, without "alias" among the exceptions) has none, as in hg.
func commandAliases(cfg *configSet) map[string]string {
	if cfg == nil || plainMode("alias") {
		return nil
	}
	m := map[string]string{}
	sec := config.Alias.Section // each of its names is an alias
	for _, n := range cfg.Names(sec) {
		if strings.Contains(n, ":") {
			continue
		}
		it, _ := cfg.Lookup(sec, n)
		m[n] = it.Value
	}
	return m
}

// resolveCommand finds name among the commands and aliases, as hg's
// findcmd: an exact name, else a unique prefix (debug commands only when
// nothing else matches).
func resolveCommand(name string, aliases map[string]string) (*command, *aliasDef, error) {
	if def, ok := aliases[name]; ok {
		return nil, &aliasDef{name, def}, nil
	}
	if c, ok := commands[name]; ok {
		return c, nil, nil
	}
	var found, debug []string
	seen := map[*command]bool{}
	add := func(n string) {
		if strings.HasPrefix(n, "debug") {
			debug = append(debug, n)
		} else {
			found = append(found, n)
		}
	}
	for n, c := range commands {
		if _, shadowed := aliases[n]; shadowed {
			continue
		}
		if strings.HasPrefix(n, name) && !seen[c] {
			seen[c] = true
			// The command's own name when it matches, else the alias
			// that did.
			if strings.HasPrefix(c.name, name) {
				n = c.name
			}
			add(n)
		}
	}
	for n := range aliases {
		if strings.HasPrefix(n, name) {
			add(n)
		}
	}
	if len(found) == 0 {
		found = debug
	}
	switch len(found) {
	case 0:
		var all []string
		for n := range commands {
			if _, shadowed := aliases[n]; !shadowed {
				all = append(all, n)
			}
		}
		for n := range aliases {
			all = append(all, n)
		}
		sort.Strings(all)
		return nil, nil, &unknownCommandError{name: name, similar: similarNames(all, name)}
	case 1:
		if def, ok := aliases[found[0]]; ok {
			return nil, &aliasDef{found[0], def}, nil
		}
		return commands[found[0]], nil, nil
	}
	sort.Strings(found)
	return nil, nil, &ambiguousCommandError{name: name, matches: found}
}

// unknownCommandError is hg's UnknownCommand: "hgfs: unknown command"
// with the similar names, or a pointer to the list of commands.
type unknownCommandError struct {
	name    string
	similar []string
}

func (e *unknownCommandError) Error() string { return fmt.Sprintf("unknown command '%s'", e.name) }

// ambiguousCommandError is hg's AmbiguousCommand.
type ambiguousCommandError struct {
	name    string
	matches []string
}

func (e *ambiguousCommandError) Error() string {
	return fmt.Sprintf("command '%s' is ambiguous:\n    %s", e.name, strings.Join(e.matches, " "))
}

// expand returns the command the alias runs and its arguments: the
// definition's, with $N replaced by the N-th of given (which is then
// dropped), followed by the rest of given.
func (a *aliasDef) expand(given []string) (*command, []string, error) {
	if a.definition == "" {
		return nil, nil, &configError{msg: fmt.Sprintf("no definition for alias '%s'", a.name)}
	}
	if strings.HasPrefix(a.definition, "!") {
		return nil, nil, &configError{
			msg:  fmt.Sprintf("shell alias '%s' is not supported", a.name),
			hint: "hgfs runs no shell commands from its configuration; run the command from a shell function instead",
		}
	}
	words, err := shellSplit(a.definition)
	if err != nil {
		return nil, nil, &configError{msg: fmt.Sprintf("error in definition for alias '%s': %v", a.name, err)}
	}
	if len(words) == 0 {
		return nil, nil, &configError{msg: fmt.Sprintf("no definition for alias '%s'", a.name)}
	}
	for _, w := range words {
		flag, _, _ := strings.Cut(w, "=")
		switch {
		case flag == "--cwd" || flag == "--repository" || flag == "--repo" || flag == "--config" || strings.HasPrefix(w, "-R"):
			if strings.HasPrefix(w, "-R") {
				flag = "-R"
			}
			return nil, nil, &configError{msg: fmt.Sprintf("error in definition for alias '%s': %s may only be given on the command line", a.name, flag)}
		}
	}
	target := words[0]
	cmd, _, err := resolveCommand(target, nil)
	if err != nil {
		ce := &configError{msg: fmt.Sprintf("alias '%s' resolves to unknown command '%s'", a.name, target)}
		if _, amb := err.(*ambiguousCommandError); amb {
			ce.msg = fmt.Sprintf("alias '%s' resolves to ambiguous command '%s'", a.name, target)
		} else if u, ok := err.(*unknownCommandError); ok {
			ce.hint = similarityHint(u.similar)
		}
		return nil, nil, ce
	}
	used := map[int]bool{}
	var args []string
	for _, w := range words[1:] {
		var b strings.Builder
		for i := 0; i < len(w); i++ {
			j := i + 1
			for j < len(w) && w[j] >= '0' && w[j] <= '9' {
				j++
			}
			if w[i] != '$' || j == i+1 {
				b.WriteByte(w[i])
				continue
			}
			n, _ := strconv.Atoi(w[i+1 : j])
			if n < 1 || n > len(given) {
				return nil, nil, abortf("too few arguments for command alias")
			}
			used[n-1] = true
			b.WriteString(given[n-1])
			i = j - 1
		}
		args = append(args, b.String())
	}
	for i, g := range given {
		if !used[i] {
			args = append(args, g)
		}
	}
	return cmd, args, nil
}

// shellSplit splits s into words as Python's shlex.split (POSIX mode):
// blanks separate words, single quotes keep everything, double quotes
// keep everything but a backslash before $, `, ", \ or a newline, and a
// backslash outside quotes escapes the next character.
func shellSplit(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 >= len(s) {
				return nil, fmt.Errorf("no escaped character")
			}
			i++
			cur.WriteByte(s[i])
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("no closing quotation")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("no closing quotation")
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// plainMode is hg's ui.plain(feature): HGPLAIN or HGPLAINEXCEPT is set
// and feature is not among HGPLAINEXCEPT's comma-separated exceptions.
func plainMode(feature string) bool {
	_, plain := os.LookupEnv("HGPLAIN")
	except, hasExcept := os.LookupEnv("HGPLAINEXCEPT")
	if !plain && !hasExcept {
		return false
	}
	for _, e := range strings.Split(strings.TrimSpace(except), ",") {
		if e == feature {
			return false
		}
	}
	return true
}
