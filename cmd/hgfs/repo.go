package main

import (
	"io"
	"os"
	"path/filepath"
)

// repoRoot returns the repository the command works on: -R/--repository
// (relative to the working directory), else the nearest directory at or
// above the working directory holding .hg, as hg finds it.
func (c *cmdContext) repoRoot() (string, error) {
	if r := c.opts.String("repository"); r != "" {
		r = absFrom(c.cwd, r)
		if fi, err := os.Stat(filepath.Join(r, ".hg")); err != nil || !fi.IsDir() {
			if isBundleFile(r) {
				return "", abortf("%s is a bundle file: hgfs cannot use a bundle as a repository overlay (hg's -R BUNDLE)", c.opts.String("repository")).
					withHint("clone it into a repository instead: hgfs clone %s DEST", c.opts.String("repository"))
			}
			return "", abortf("repository %s not found", c.opts.String("repository"))
		}
		return r, nil
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
func (c *cmdContext) abs(p string) string { return absFrom(c.cwd, p) }

// absFrom resolves the path p against the directory cwd. On Windows a
// path rooted without a drive ("\x" or "/x") is on cwd's drive, as
// Windows itself resolves it (filepath.IsAbs says no and Join would
// append it to cwd).
func absFrom(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if p != "" && os.IsPathSeparator(p[0]) && filepath.VolumeName(p) == "" {
		return filepath.Join(filepath.VolumeName(cwd), p)
	}
	return filepath.Join(cwd, p)
}

// isBundleFile reports whether path is a regular file starting as every
// bundle does ("HG10", "HG20", "HGS1": hg's bundle magic).
func isBundleFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false
	}
	switch string(magic[:]) {
	case "HG10", "HG20", "HGS1":
		return true
	}
	return false
}
