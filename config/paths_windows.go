package config

import (
	"os"
	"path/filepath"
)

// systemPaths are the system-wide hgrc files on Windows
// (mercurial/scmwindows.py systemrcpath): mercurial.ini and hgrc.d\*.rc
// beside the executable, then %PROGRAMDATA%\Mercurial's hgrc.d\*.rc,
// mercurial.ini and hgrc. hg also reads the paths the registry key
// HKLM\SOFTWARE\Mercurial names; hgfs does not.
func systemPaths(env Env) []string {
	var out []string
	dir := func(d string) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, rcFiles(d)...)
		}
	}
	if exe, err := os.Executable(); err == nil {
		out = append(out, filepath.Join(filepath.Dir(exe), "mercurial.ini"))
		dir(filepath.Join(filepath.Dir(exe), "hgrc.d"))
	}
	if pd, _ := env("PROGRAMDATA"); pd != "" {
		pd = filepath.Join(pd, "Mercurial")
		dir(filepath.Join(pd, "hgrc.d"))
		for _, f := range []string{"mercurial.ini", "hgrc"} {
			if fi, err := os.Stat(filepath.Join(pd, f)); err == nil && fi.Mode().IsRegular() {
				out = append(out, filepath.Join(pd, f))
			}
		}
	}
	return out
}

// userPaths are the user's hgrc files on Windows (scmwindows.py
// userrcpath): mercurial.ini and .hgrc in the home directory (%HOME%,
// else %USERPROFILE%, else %HOMEDRIVE%%HOMEPATH%), then in %USERPROFILE%
// when that is another directory.
func userPaths(env Env) []string {
	home, ok := env("HOME")
	if !ok {
		home, ok = env("USERPROFILE")
	}
	if !ok {
		drive, _ := env("HOMEDRIVE")
		if hp, hok := env("HOMEPATH"); hok {
			home, ok = filepath.Join(drive, hp), true
		}
	}
	var out []string
	if ok {
		out = append(out, filepath.Join(home, "mercurial.ini"), filepath.Join(home, ".hgrc"))
	}
	if up, _ := env("USERPROFILE"); up != "" && up != home {
		out = append(out, filepath.Join(up, "mercurial.ini"), filepath.Join(up, ".hgrc"))
	}
	return out
}
