//go:build !windows

package config

import "path/filepath"

// systemPaths are the system-wide hgrc files (mercurial/scmposix.py
// systemrcpath, without the ones beside hg's own installation):
// /etc/mercurial/hgrc and /etc/mercurial/hgrc.d/*.rc.
func systemPaths(Env) []string {
	return append(rcFiles("/etc/mercurial/hgrc"), rcFiles("/etc/mercurial/hgrc.d")...)
}

// userPaths are the user's hgrc files (scmposix.py userrcpath): ~/.hgrc
// and $XDG_CONFIG_HOME/hg/hgrc (~/.config/hg/hgrc when XDG_CONFIG_HOME
// is unset or relative).
func userPaths(env Env) []string {
	var out []string
	home, _ := env("HOME")
	if home != "" {
		out = append(out, filepath.Join(home, ".hgrc"))
	}
	xdg, ok := env("XDG_CONFIG_HOME")
	if !ok || !filepath.IsAbs(xdg) {
		if home == "" {
			return out
		}
		xdg = filepath.Join(home, ".config")
	}
	return append(out, filepath.Join(xdg, "hg", "hgrc"))
}
