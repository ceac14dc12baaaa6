package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/config"
)

type configSet = config.Config

// loadConfig builds the configuration as hg does: the hgrc files
// (HGRCPATH, or the system and user files), then the repository's
// .hg/hgrc when there is one, then --config overrides, which win.
func loadConfig(overrides []string, repoRoot string) (*configSet, error) {
	cfg, err := config.Load(os.LookupEnv)
	if err != nil {
		return nil, abortf("%v", err)
	}
	if repoRoot != "" {
		if err := cfg.ReadFile(filepath.Join(repoRoot, ".hg", "hgrc")); err != nil {
			return nil, abortf("%v", err)
		}
	}
	for _, o := range overrides {
		s, n, v, err := config.ParseOverride(o)
		if err != nil {
			return nil, abortf("%v", err)
		}
		cfg.Set(s, n, v, "--config")
	}
	return cfg, nil
}

// findRepo is repository discovery without failing: -R, else the nearest
// .hg upward from cwd, else "".
func findRepo(cwd, flag string) string {
	if flag != "" {
		if !filepath.IsAbs(flag) {
			flag = filepath.Join(cwd, flag)
		}
		return filepath.Clean(flag)
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
default and description.`,
		options: []option{{0, "known", optBool, "", "list the settings hgfs reads, with defaults and docs"}},
		run:     runConfig,
	})
}

func runConfig(ctx context.Context, c *cmdContext, args []string) error {
	cfg := c.ui.cfg
	if c.opts.Bool("known") {
		for _, k := range config.All() {
			c.ui.write("%s=%s\n    %s\n", k.Key(), k.Default, k.Doc)
		}
		return nil
	}
	if len(args) == 1 && strings.Contains(args[0], ".") {
		s, n, _ := strings.Cut(args[0], ".")
		it, ok := cfg.Lookup(s, n)
		if !ok {
			return errNothing
		}
		if c.ui.debug {
			c.ui.write("%s: ", it.Source)
		}
		c.ui.write("%s\n", it.Value)
		return nil
	}
	matched := false
	for _, s := range cfg.Sections() {
		for _, n := range cfg.Names(s) {
			if len(args) > 0 && !matchesAny(args, s, n) {
				continue
			}
			it, _ := cfg.Lookup(s, n)
			matched = true
			if c.ui.debug {
				c.ui.write("%s: ", it.Source)
			}
			c.ui.write("%s.%s=%s\n", s, n, it.Value)
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
