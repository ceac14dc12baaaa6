package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ParseError is a malformed hgrc line; its text follows hg's
// "parse error at FILE:LINE: message".
type ParseError struct {
	Source  string // "file:line"
	Message string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("parse error at %s: %s", e.Source, e.Message)
}

// The line shapes of mercurial/config.py's parse, matched by hand: its
// expressions, compiled with Go's regexp at every start of every
// command, cost about 0.6 ms of CPU with their parsing in each `hgfs
// update` (perf), and a line is classified by a scan of its bytes. Each
// function is what the expression beside it matches in Python, whose \s
// in a bytes pattern is isSpace's [ \t\n\r\v\f] (Go's lacks \v), on a
// line with no newline; FuzzLineShapes holds them to the expressions.

func trimSpace(s string) string { return strings.Trim(s, pySpaces) }

// matchSection is `^\[([^\[]+)\]`: the name runs to the last ']' before
// any second '['.
func matchSection(l string) (string, bool) {
	if len(l) < 3 || l[0] != '[' {
		return "", false
	}
	s := l[1:]
	if i := strings.IndexByte(s, '['); i >= 0 {
		s = s[:i]
	}
	if p := strings.LastIndexByte(s, ']'); p >= 1 {
		return s[:p], true
	}
	return "", false
}

// matchItem is `^([^=\s][^=]*?)\s*=\s*(.*\S|)`: the name before the
// first '=' and the value after it, both trimmed of spaces.
func matchItem(l string) (name, value string, ok bool) {
	eq := strings.IndexByte(l, '=')
	if eq < 1 || isSpace(l[0]) {
		return "", "", false
	}
	return strings.TrimRight(l[:eq], pySpaces), trimSpace(l[eq+1:]), true
}

// matchCont is `^\s+(\S|\S.*\S)\s*$`: an indented line's text.
func matchCont(l string) (string, bool) {
	if l == "" || !isSpace(l[0]) {
		return "", false
	}
	t := trimSpace(l)
	return t, t != ""
}

// isEmpty is `^(;|#|\s*$)` and isComment `^(;|#)`.
func isEmpty(l string) bool { return isComment(l) || trimSpace(l) == "" }

func isComment(l string) bool { return l != "" && (l[0] == ';' || l[0] == '#') }

// matchDirective is `^%unset\s+(\S+)` when whole is false (the first
// word after the spaces) and `^%include\s+(\S|\S.*\S)\s*$` when true
// (all of the rest, trimmed).
func matchDirective(l, name string, whole bool) (string, bool) {
	rest, ok := strings.CutPrefix(l, name)
	if !ok || rest == "" || !isSpace(rest[0]) {
		return "", false
	}
	rest = trimSpace(rest)
	if i := strings.IndexAny(rest, pySpaces); !whole && i >= 0 {
		return rest[:i], true
	}
	return rest, rest != ""
}

// maxIncludeDepth bounds %include recursion (a file including itself).
const maxIncludeDepth = 32

// Parse reads hgrc text from src, a trusted source, into c. Relative
// %include paths are resolved against the directory of src; a missing
// included file is ignored, as hg does.
func (c *Config) Parse(src string, data []byte) error {
	return c.parse(src, data, 0, true)
}

// parse reads hgrc text; what it sets (and what the files it includes
// set) goes to the trusted configuration only if trusted.
func (c *Config) parse(src string, data []byte, depth int, trusted bool) error {
	if depth > maxIncludeDepth {
		return &ParseError{Source: src, Message: "%include nested too deeply"}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	section, item := "", ""
	cont := false
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		if l == "" {
			continue
		}
		where := func() string { return src + ":" + strconv.Itoa(i+1) }
		bare := strings.TrimRight(l, "\r\n")
		if cont {
			if isComment(bare) {
				continue
			}
			if v, ok := matchCont(bare); ok {
				prev, _ := c.all.lookup(section, item)
				c.put(section, item, Item{Value: prev.Value + "\n" + v, Source: where()}, trusted)
				continue
			}
			item, cont = "", false
		}
		if inc, ok := matchDirective(bare, "%include", true); ok {
			p := expandPath(inc)
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(src), p)
			}
			b, err := readLimited(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return &ParseError{Source: where(), Message: fmt.Sprintf("cannot include %s (%v)", p, errors.Unwrap(err))}
			}
			if err := c.parse(p, b, depth+1, trusted); err != nil {
				return err
			}
			continue
		}
		if isEmpty(bare) {
			continue
		}
		if name, ok := matchSection(bare); ok {
			section = name
			continue
		}
		if name, value, ok := matchItem(bare); ok {
			item, cont = name, true
			c.put(section, item, Item{Value: value, Source: where()}, trusted)
			continue
		}
		if name, ok := matchDirective(bare, "%unset", false); ok {
			c.unset(section, name, trusted)
			continue
		}
		msg := strings.TrimRight(bare, " \t")
		if strings.HasPrefix(l, " ") {
			msg = "unexpected leading whitespace: " + msg
		}
		return &ParseError{Source: where(), Message: msg}
	}
	return nil
}

// ReadFile reads an hgrc file as hg's ui.readconfig reads a repository's
// .hg/hgrc: its values count only if the file is trusted (trust.go); a
// missing or unreadable file is not an error.
func (c *Config) ReadFile(path string) error { return c.readFile(path, false) }

// ReadTrustedFile reads an hgrc file the user named (hg serve
// --web-conf): trusted whoever owns it; a missing file is an error.
func (c *Config) ReadTrustedFile(path string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	return c.readFile(path, true)
}

// readFile reads one hgrc file; trust skips the ownership check (hg
// trusts the system, user and HGRCPATH files whoever owns them).
func (c *Config) readFile(path string, trust bool) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil
		}
		return err
	}
	defer f.Close()
	trusted := trust
	if !trusted {
		if trusted, err = c.fileTrusted(f, path); err != nil {
			return err
		}
	}
	b, err := readAll(f, path)
	if err != nil {
		return err
	}
	err = c.parse(path, b, 0, trusted)
	var pe *ParseError
	if !trusted && errors.As(err, &pe) {
		c.warnf("ignored %s: %s\n", pe.Source, pe.Message)
		err = nil
	}
	if trusted {
		c.noteTrust()
	}
	return err
}

// maxFileSize bounds one hgrc file: config is small, and an include of
// /dev/zero must not eat memory.
const maxFileSize = 16 << 20

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path)
}

func readAll(f *os.File, path string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if len(b) > maxFileSize {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("config file larger than 16 MiB")}
	}
	return b, nil
}

// Env is the environment lookups config loading needs (os.LookupEnv in
// the command, a map in tests).
type Env func(key string) (string, bool)

// Paths lists the hgrc files hg would read, in order (mercurial/rcutil.py
// rccomponents, keep in sync): with HGRCPATH set, its entries (files, or
// directories whose *.rc files are read in sorted order; set but empty
// means none); otherwise the platform's system files, then its user files
// (systemPaths, userPaths). The repository's .hg/hgrc comes after these
// and is added by the caller once the repository is known.
func Paths(env Env) []string {
	if v, ok := env("HGRCPATH"); ok {
		var out []string
		for _, p := range filepath.SplitList(v) {
			if p != "" {
				out = append(out, rcFiles(expandPathEnv(p, env))...)
			}
		}
		return out
	}
	return append(systemPaths(env), userPaths(env)...)
}

// rcFiles expands a directory to its *.rc files, sorted.
func rcFiles(p string) []string {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return []string{p}
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".rc") && !e.IsDir() {
			out = append(out, filepath.Join(p, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

func expandPath(p string) string { return expandPathEnv(p, os.LookupEnv) }

// expandPathEnv expands ~ and $VARS as util.expandpath does.
func expandPathEnv(p string, env Env) string {
	p = os.Expand(p, func(k string) string { v, _ := env(k); return v })
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, ok := env("HOME"); ok {
			p = home + p[1:]
		}
	}
	return p
}

// Load reads the hgrc files of Paths(env) in order, all trusted.
func Load(env Env) (*Config, error) {
	c := New()
	for _, p := range Paths(env) {
		if err := c.readFile(p, true); err != nil {
			return nil, err
		}
	}
	return c, nil
}
