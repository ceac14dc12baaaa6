package templater

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/testenv"
)

var fuzzSeeds = []string{
	"{rev}", "{node|short}\\n", "{files % '{file}\\n'}", "{if(tags, '{tags}', \"x\")}", "{", "{'", "{r'x'}", "{(((1)))}", "\\{x}", "{a(b=c, d)}",
	"{files % '{ifeq(file, \"a\", \"b\")}'}", "{bookmarks % '{ifeq(bookmark, active, \"*\")}'}",
	"{files % '{files % \"{ifeq(file, file, \"x\", \"y\")}\"}'}", "{1+1+1}", "{rev|short|short}",
	"{sub('[a-z]', 'x', desc)}", "{revset('%d', rev) % '{rev}'}", "{pad(rev, 3, '-', True)}", "{join(files, ', ')}",
	"{word(0, desc)}", "{date|isodate}", "{latesttag % '{tag}'}", "{get(extras, 'branch')}", "{p1.rev}",
	"{separate(' ', rev, node)}", "{indent(desc, '> ')}", "{shortest(node, 1)}", "{ifcontains(rev, revset('0'), 'y')}",
	// Widths past memory (which killed the process) and past int64's
	// bytes (which panicked in strings.Repeat).
	"{pad(rev, 100000000000)}", "{pad(rev, 9223372036854775807, 'ab')}",
}

// FuzzParse checks that any template parses or fails with an error,
// never a panic or unbounded recursion.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Parse(s)
	})
}

// FuzzRender checks that any template that parses renders or fails with
// an error on a small repository (two changesets, a tag, two bookmarks
// of which one is active), never a panic or unbounded recursion.
func FuzzRender(f *testing.F) {
	dir := f.TempDir()
	testenv.Hg(f, dir, "init", "r")
	dir = filepath.Join(dir, "r")
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	testenv.Hg(f, dir, "commit", "-q", "-A", "-m", "first\n\nbody")
	testenv.Hg(f, dir, "tag", "-r", "0", "v1")
	testenv.Hg(f, dir, "bookmark", "-r", "0", "other")
	testenv.Hg(f, dir, "bookmark", "bm")
	r, err := repo.Open(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tmpl, err := Parse(s)
		if err != nil {
			return
		}
		for rev := range 2 {
			_, _ = tmpl.Render(&Env{Repo: r}, rev)
		}
	})
}
