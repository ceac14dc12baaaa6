package main

import (
	"fmt"
	"strconv"
	"strings"
)

// optKind is the type of value an option takes.
type optKind int

const (
	optBool optKind = iota
	optString
	optInt
	optList // repeatable string
)

// option describes one command-line option, like an entry of hg's
// fancyopts tables: a short letter (or 0), a long name, a kind, a default and
// a help line.
type option struct {
	short byte
	long  string
	kind  optKind
	def   string // default for string and int options
	help  string
}

// longAliases are other spellings of long options, as hg's optaliases:
// --repo is --repository.
var longAliases = map[string]string{"repo": "repository"}

// opts holds parsed option values by long name.
type opts struct {
	bools   map[string]bool
	strs    map[string]string
	lists   map[string][]string
	ints    map[string]int
	present map[string]bool
}

func newOpts() *opts {
	return &opts{bools: map[string]bool{}, strs: map[string]string{}, lists: map[string][]string{}, ints: map[string]int{}, present: map[string]bool{}}
}

func (o *opts) Bool(name string) bool     { return o.bools[name] }
func (o *opts) String(name string) string { return o.strs[name] }
func (o *opts) List(name string) []string { return o.lists[name] }
func (o *opts) Int(name string) int       { return o.ints[name] }
func (o *opts) Changed(name string) bool  { return o.present[name] }
func (o *opts) setDefaults(table []option) {
	for _, op := range table {
		switch op.kind {
		case optString:
			if _, ok := o.strs[op.long]; !ok {
				o.strs[op.long] = op.def
			}
		case optInt:
			if _, ok := o.ints[op.long]; !ok && op.def != "" {
				n, _ := strconv.Atoi(op.def)
				o.ints[op.long] = n
			}
		}
	}
}

// usageError is a command-line mistake: hg prints it with the command's
// synopsis and exits 255.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseArgs parses args against table in hg's GNU style: options and
// positional arguments may be interleaved, "--" ends options, long options
// take "--name=value" or "--name value", short ones "-xvalue" or "-x value",
// and short booleans combine ("-qv").
func parseArgs(args []string, table []option, o *opts) ([]string, error) {
	byLong := map[string]*option{}
	byShort := map[byte]*option{}
	for i := range table {
		byLong[table[i].long] = &table[i]
		if table[i].short != 0 {
			byShort[table[i].short] = &table[i]
		}
	}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			return pos, nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			op := byLong[name]
			if op == nil && byLong[longAliases[name]] != nil {
				op = byLong[longAliases[name]]
			}
			if op == nil {
				// hg accepts unambiguous prefixes of long options.
				var match *option
				for l, cand := range byLong {
					if strings.HasPrefix(l, name) {
						if match != nil {
							return nil, &usageError{fmt.Sprintf("option --%s not a unique prefix", name)}
						}
						match = cand
					}
				}
				if match == nil {
					return nil, &usageError{fmt.Sprintf("option --%s not recognized", name)}
				}
				op = match
			}
			if op.kind == optBool {
				if hasVal {
					return nil, &usageError{fmt.Sprintf("option --%s takes no argument", op.long)}
				}
				o.bools[op.long] = true
				o.present[op.long] = true
				continue
			}
			if !hasVal {
				if i+1 >= len(args) {
					return nil, &usageError{fmt.Sprintf("option --%s requires argument", op.long)}
				}
				i++
				val = args[i]
			}
			if err := o.set(op, val); err != nil {
				return nil, err
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				op := byShort[a[j]]
				if op == nil {
					return nil, &usageError{fmt.Sprintf("option -%c not recognized", a[j])}
				}
				if op.kind == optBool {
					o.bools[op.long] = true
					o.present[op.long] = true
					continue
				}
				val := a[j+1:]
				if val == "" {
					if i+1 >= len(args) {
						return nil, &usageError{fmt.Sprintf("option -%c requires argument", a[j])}
					}
					i++
					val = args[i]
				}
				if err := o.set(op, val); err != nil {
					return nil, err
				}
				break
			}
		default:
			pos = append(pos, a)
		}
	}
	return pos, nil
}

func (o *opts) set(op *option, val string) error {
	o.present[op.long] = true
	switch op.kind {
	case optString:
		o.strs[op.long] = val
	case optList:
		o.lists[op.long] = append(o.lists[op.long], val)
	case optInt:
		n, err := strconv.Atoi(val)
		if err != nil {
			return &usageError{fmt.Sprintf("invalid value %q for option --%s, expected int", val, op.long)}
		}
		o.ints[op.long] = n
	}
	return nil
}
