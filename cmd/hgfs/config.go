package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hgfs/hgfs/config"
)

type configSet = config.Config

// loadConfig builds the configuration as hg does: the hgrc files
// (HGRCPATH, or the system and user files), then the repository's
// .hg/hgrc when there is one, then --config overrides, which win. The
// repository's file is read as hg reads it (config/trust.go): its values
// count only if its owner is trusted, else warn says why it was
// ignored. The overrides are in force while it is read ([trusted],
// ui.report_untrusted given with --config count, as in hg). With useRepo
// false (a command that takes no repository: clone), the file is read
// for its warnings and errors only, as hg reads it before it knows the
// command, and its values are not used.
func loadConfig(overrides []string, repoRoot string, useRepo bool, warn func(string)) (*configSet, error) {
	cfg, err := config.Load(os.LookupEnv)
	if err != nil {
		return nil, abortf("%v", err)
	}
	cfg.Warn = warn
	type override struct{ section, name, value string }
	var ovr []override
	for _, o := range overrides {
		s, n, v, err := config.ParseOverride(o)
		if err != nil {
			return nil, abortf("%v", err)
		}
		ovr = append(ovr, override{s, n, v})
	}
	apply := func() {
		for _, o := range ovr {
			cfg.Set(o.section, o.name, o.value, "--config")
		}
	}
	apply()
	if repoRoot != "" {
		into := cfg
		if !useRepo {
			into = cfg.Copy()
		}
		if err := into.ReadFile(filepath.Join(repoRoot, ".hg", "hgrc")); err != nil {
			return nil, abortf("%v", err)
		}
		apply()
	}
	return cfg, nil
}

// earlyConfig is the configuration dispatch reads for [alias] before it
// knows the command, from the early options' repository and --config,
// with the warnings its reading gave, not yet shown.
type earlyConfig struct {
	cfg       *configSet
	root      string
	overrides []string
	warnings  []string
}

// reuse returns the command's configuration: loadConfig of repoRoot,
// the --config overrides and then the flags' (ui.quiet=true for -q),
// which is e's with the flags' set, its warnings given now, when e read
// the same repository's file with the same overrides for a command that
// uses it. Reading the five hgrc files of a Debian system twice cost
// 0.15 ms of every command (hgfs update: 1% of its time). The flags'
// overrides set afterwards give what loadConfig gives: they win either
// way, and none of them bears on how the repository's file is read.
func (e *earlyConfig) reuse(repoRoot string, overrides, flags []string, useRepo bool, warn func(string)) (*configSet, error) {
	if e == nil || !useRepo || e.root != repoRoot || !slices.Equal(e.overrides, overrides) {
		return loadConfig(append(slices.Clip(overrides), flags...), repoRoot, useRepo, warn)
	}
	for _, f := range flags {
		s, n, v, err := config.ParseOverride(f)
		if err != nil {
			return nil, abortf("%v", err)
		}
		e.cfg.Set(s, n, v, "--config")
	}
	e.cfg.Warn = warn
	for _, m := range e.warnings {
		warn(m)
	}
	return e.cfg, nil
}

// findRepo is repository discovery without failing: -R, else the nearest
// .hg upward from cwd, else "". An -R naming a file (a bundle, which
// repoRoot refuses by name) has no configuration to read.
func findRepo(cwd, flag string) string {
	if flag != "" {
		flag = absFrom(cwd, flag)
		if fi, err := os.Stat(flag); err == nil && !fi.IsDir() {
			return ""
		}
		return flag
	}
	for d := cwd; ; {
		if fi, err := os.Stat(filepath.Join(d, ".hg")); err == nil && fi.IsDir() {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func init() {
	register(&command{
		name:     "config",
		aliases:  []string{"showconfig"},
		synopsis: "[NAME]...",
		help: `show combined config settings from all hgrc files

With no arguments, print names and values of all config items. With
one argument of the form section.name, print just the value of that
config item. With multiple arguments, print names and values of all
config items with matching section names or section.names.

With --debug, the source (filename and line number) is printed for
each config item. With --known, list every setting hgfs reads with its
default and description.

A repository's .hg/hgrc owned by another user is not trusted, as in hg:
its settings are ignored (with a warning) unless its owner or group is
listed in [trusted] users or groups. --untrusted (-u) shows them too.`,
		options: []option{
			{'u', "untrusted", optBool, "", "show untrusted configuration options"},
			{0, "known", optBool, "", "list the settings hgfs reads, with defaults and docs"},
		},
		run: runConfig,
	})
}

func runConfig(ctx context.Context, c *cmdContext, args []string) error {
	if c.opts.Bool("known") {
		for _, k := range config.All() {
			c.ui.write("%s=%s\n    %s\n", k.Key(), k.Default, k.Doc)
		}
		return nil
	}
	// Listing reports what it leaves out itself, section by section, as
	// hg's walkconfig does, rather than once per lookup.
	listed := *c.ui.cfg
	listed.Debug = nil
	cfg := &listed
	untrusted := c.opts.Bool("untrusted")
	if untrusted {
		cfg = c.ui.cfg.Untrusted()
	}
	// One section.name prints its value alone (hg's uniquesel).
	unique := len(args) == 1 && strings.Contains(args[0], ".")
	matched := false
	for _, s := range cfg.Sections() {
		if c.ui.debug && !untrusted {
			u := c.ui.cfg.Untrusted()
			for _, n := range cfg.Ignored(s) {
				it, _ := u.Lookup(s, n)
				c.ui.debugf("ignoring untrusted configuration option %s.%s = %s\n", s, n, it.Value)
			}
		}
		for _, n := range cfg.Names(s) {
			if len(args) > 0 && !matchesAny(args, s, n) {
				continue
			}
			it, _ := cfg.Lookup(s, n)
			matched = true
			if c.ui.debug {
				c.ui.write("%s: ", it.Source)
			}
			// A value's newlines print as \n, as hg's plain output has
			// them.
			v := strings.ReplaceAll(it.Value, "\n", `\n`)
			if unique {
				c.ui.write("%s\n", v)
			} else {
				c.ui.write("%s.%s=%s\n", s, n, v)
			}
		}
	}
	if !matched {
		return errNothing
	}
	return nil
}

func matchesAny(args []string, section, name string) bool {
	for _, a := range args {
		if a == section || a == section+"."+name {
			return true
		}
	}
	return false
}
