// Package config holds hgfs's settings in Mercurial's hgrc model: sections
// of name = value items, each remembering where it was set.
//
// Values read from a file hg would not trust (trust.go) are kept apart,
// as hg's ui keeps its trusted and untrusted configurations: Lookup and
// the typed getters never see them; Untrusted is the view of everything
// read, for the few settings hg reads with untrusted=True.
//
// It owns the hgrc syntax, the trust rules and the table of every setting
// hgfs reads (items.go: name, type, default); code outside reads settings
// through that table, never by literal section and name. It must not know
// what a setting does: that belongs to the package that uses it.
package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Item is one setting and where it came from ("--config", "/etc/mercurial/hgrc:3").
type Item struct {
	Value  string
	Source string
}

// values is one configuration: sections of items, and each section's
// names in the order they were first set.
type values struct {
	items map[string]map[string]Item
	order map[string][]string
}

func newValues() *values {
	return &values{items: map[string]map[string]Item{}, order: map[string][]string{}}
}

func (v *values) set(section, name string, it Item) {
	s := v.items[section]
	if s == nil {
		s = map[string]Item{}
		v.items[section] = s
	}
	if _, ok := s[name]; !ok {
		v.order[section] = append(v.order[section], name)
	}
	s[name] = it
}

func (v *values) unset(section, name string) {
	s := v.items[section]
	if _, ok := s[name]; !ok {
		return
	}
	delete(s, name)
	o := v.order[section]
	for i, n := range o {
		if n == name {
			v.order[section] = append(o[:i:i], o[i+1:]...)
			break
		}
	}
}

func (v *values) lookup(section, name string) (Item, bool) {
	it, ok := v.items[section][name]
	return it, ok
}

func (v *values) copy() *values {
	c := newValues()
	for s, items := range v.items {
		m := make(map[string]Item, len(items))
		for n, it := range items {
			m[n] = it
		}
		c.items[s] = m
	}
	for s, o := range v.order {
		c.order[s] = append([]string(nil), o...)
	}
	return c
}

// Config is a set of settings. Later Sets override earlier ones.
type Config struct {
	trusted *values // what Lookup and the getters read (hg's _tcfg)
	all     *values // every value read, trusted or not (hg's _ucfg)
	trust   trust

	// Warn, if set, receives hg's warnings about files read:
	// "not trusting file ...", and "ignored FILE:LINE: ..." for a parse
	// error in a file not trusted. Each message ends in a newline.
	Warn func(msg string)
	// Debug, if set, is told of each lookup that ignores a value from an
	// untrusted file, as hg --debug prints it ("ignoring untrusted
	// configuration option SECTION.NAME = VALUE").
	Debug func(msg string)
}

// New returns an empty Config.
func New() *Config {
	v := newValues()
	return &Config{trusted: v, all: v.copy()}
}

// Copy returns an independent copy of c, with its hooks.
func (c *Config) Copy() *Config {
	n := *c
	n.trusted, n.all = c.trusted.copy(), c.all.copy()
	n.trust = c.trust.copy()
	return &n
}

// Untrusted returns a read-only view of every value read, from trusted
// files or not: what hg reads with untrusted=True. Only settings whose
// value an untrusted repository owner may choose (hg serve's
// server.uncompressed, phases.publish) are read through it.
func (c *Config) Untrusted() *Config {
	return &Config{trusted: c.all, all: c.all, trust: c.trust}
}

// Set records section.name = value from source, a trusted one (a
// trusted file, --config, the program itself).
func (c *Config) Set(section, name, value, source string) {
	c.put(section, name, Item{Value: value, Source: source}, true)
	if section == "trusted" {
		c.noteTrust()
	}
}

// put records an item in the untrusted configuration, and in the
// trusted one when it comes from a trusted source.
func (c *Config) put(section, name string, it Item, trusted bool) {
	c.all.set(section, name, it)
	if trusted && c.trusted != c.all {
		c.trusted.set(section, name, it)
	}
}

// Unset removes section.name, as %unset does.
func (c *Config) Unset(section, name string) { c.unset(section, name, true) }

func (c *Config) unset(section, name string, trusted bool) {
	c.all.unset(section, name)
	if trusted && c.trusted != c.all {
		c.trusted.unset(section, name)
	}
}

// Lookup returns the item for section.name.
func (c *Config) Lookup(section, name string) (Item, bool) {
	it, ok := c.trusted.lookup(section, name)
	if c.Debug != nil && c.all != c.trusted {
		if u, uok := c.all.lookup(section, name); uok && (!ok || u.Value != it.Value) {
			c.Debug(fmt.Sprintf("ignoring untrusted configuration option %s.%s = %s\n", section, name, u.Value))
		}
	}
	return it, ok
}

// Ignored lists the names in section whose value from an untrusted file
// differs from the trusted one (or has none), in the order they were
// set: what hg --debug reports as "ignoring untrusted configuration
// option" when it lists a section.
func (c *Config) Ignored(section string) []string {
	var out []string
	for _, n := range c.all.order[section] {
		u, _ := c.all.lookup(section, n)
		if t, ok := c.trusted.lookup(section, n); !ok || t.Value != u.Value {
			out = append(out, n)
		}
	}
	return out
}

// String returns section.name or def.
func (c *Config) String(section, name, def string) string {
	if it, ok := c.Lookup(section, name); ok {
		return it.Value
	}
	return def
}

// Bool parses section.name as hg does ("1", "yes", "true", "on", "always";
// "0", "no", "false", "off", "never").
func (c *Config) Bool(section, name string, def bool) (bool, error) {
	it, ok := c.Lookup(section, name)
	if !ok {
		return def, nil
	}
	if b, ok := parseBool(it.Value); ok {
		return b, nil
	}
	return def, fmt.Errorf("%s.%s is not a boolean ('%s')", section, name, it.Value)
}

// parseBool is stringutil.parsebool (keep in sync).
func parseBool(v string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "yes", "true", "on", "always":
		return true, true
	case "0", "no", "false", "off", "never", "":
		return false, true
	}
	return false, false
}

// Int parses section.name as an integer.
func (c *Config) Int(section, name string, def int) (int, error) {
	it, ok := c.Lookup(section, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(it.Value))
	if err != nil {
		return def, fmt.Errorf("%s.%s is not a valid integer ('%s')", section, name, it.Value)
	}
	return n, nil
}

// List parses section.name as hg's configlist does: items separated by
// commas or white space, double quotes around items that contain them.
func (c *Config) List(section, name string) []string {
	it, ok := c.Lookup(section, name)
	if !ok {
		return nil
	}
	return ParseList(it.Value)
}

// Sections lists the section names, sorted.
func (c *Config) Sections() []string {
	var s []string
	for k, v := range c.trusted.items {
		if len(v) > 0 {
			s = append(s, k)
		}
	}
	sort.Strings(s)
	return s
}

// Names lists a section's names in the order they were first set.
func (c *Config) Names(section string) []string {
	return append([]string(nil), c.trusted.order[section]...)
}

// ParseOverride parses one --config argument, "section.name=value".
func ParseOverride(arg string) (section, name, value string, err error) {
	key, value, ok := strings.Cut(arg, "=")
	if ok {
		section, name, ok = strings.Cut(key, ".")
	}
	if !ok || section == "" || name == "" {
		return "", "", "", fmt.Errorf("malformed --config option: '%s' (use --config section.name=value)", arg)
	}
	return section, name, value, nil
}
