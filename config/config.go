// Package config holds hgfs's settings in Mercurial's hgrc model: sections
// of name = value items, each remembering where it was set.
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

// Config is a set of settings. Later Sets override earlier ones.
type Config struct {
	items map[string]map[string]Item
	order map[string][]string
}

// New returns an empty Config.
func New() *Config {
	return &Config{items: map[string]map[string]Item{}, order: map[string][]string{}}
}

// Set records section.name = value from source.
func (c *Config) Set(section, name, value, source string) {
	s := c.items[section]
	if s == nil {
		s = map[string]Item{}
		c.items[section] = s
	}
	if _, ok := s[name]; !ok {
		c.order[section] = append(c.order[section], name)
	}
	s[name] = Item{Value: value, Source: source}
}

// Unset removes section.name, as %unset does.
func (c *Config) Unset(section, name string) {
	if s := c.items[section]; s != nil {
		if _, ok := s[name]; ok {
			delete(s, name)
			o := c.order[section]
			for i, n := range o {
				if n == name {
					c.order[section] = append(o[:i:i], o[i+1:]...)
					break
				}
			}
		}
	}
}

// Lookup returns the item for section.name.
func (c *Config) Lookup(section, name string) (Item, bool) {
	it, ok := c.items[section][name]
	return it, ok
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

// Sections lists the section names, sorted.
func (c *Config) Sections() []string {
	var s []string
	for k, v := range c.items {
		if len(v) > 0 {
			s = append(s, k)
		}
	}
	sort.Strings(s)
	return s
}

// Names lists a section's names in the order they were first set.
func (c *Config) Names(section string) []string {
	return append([]string(nil), c.order[section]...)
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
