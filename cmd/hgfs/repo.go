package main

import (
	"os"
	"path/filepath"
)

// repoRoot returns the repository the command works on: -R/--repository
// (relative to the working directory), else the nearest directory at or
// above the working directory holding .hg, as hg finds it.
func (c *cmdContext) repoRoot() (string, error) {
	if r := c.opts.String("repository"); r != "" {
		if !filepath.IsAbs(r) {
			r = filepath.Join(c.cwd, r)
		}
		if fi, err := os.Stat(filepath.Join(r, ".hg")); err != nil || !fi.IsDir() {
			return "", abortf("repository %s not found", c.opts.String("repository"))
		}
		return filepath.Clean(r), nil
	}
	for d := c.cwd; ; {
		if fi, err := os.Stat(filepath.Join(d, ".hg")); err == nil && fi.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", abortf("no repository found in '%s' (.hg not found)", c.cwd)
		}
		d = parent
	}
}

// abs resolves a command-line path against the working directory.
func (c *cmdContext) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(c.cwd, p)
}
