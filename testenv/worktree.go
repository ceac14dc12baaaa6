package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// WorkingCopy lists the working directory at root (without .hg) as one
// line per directory ("dir/"), symlink ("path -> target") and file
// ("path mode content"): what two checkouts of a revision must share.
func WorkingCopy(t testing.TB, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".hg" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			b.WriteString(rel + "/\n")
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			b.WriteString(rel + " -> " + tg + "\n")
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(rel + " " + fi.Mode().String() + " " + strconv.Quote(string(data)) + "\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// DirstateV2Allow lets hg without its Rust extensions (Debian's 6.3, the
// hg 7 here) read and write dirstate-v2.
var DirstateV2Allow = []string{"--config", "storage.dirstate-v2.slow-path=allow"}

var debugstateDates = regexp.MustCompile(`(?m) (set|unset) +`)

// Debugstate is `hg debugstate` of the working copy at dir without the
// mtime column (two checkouts' mtimes differ): states, modes, sizes,
// paths.
func (m Mercurial) Debugstate(t testing.TB, dir string) string {
	t.Helper()
	out := m.Run(t, dir, append([]string{"debugstate", "--no-dates"}, DirstateV2Allow...)...)
	return WithoutDates(string(out))
}

// WithoutDates drops the mtime column of `hg debugstate --no-dates`
// output.
func WithoutDates(debugstate string) string {
	return debugstateDates.ReplaceAllString(debugstate, " ")
}
