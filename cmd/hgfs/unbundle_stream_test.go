package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// streamTimingLine is the line each hg prints with the stream's rate:
// 6.3 "transferred ... in N seconds", 7.2 "stream-cloned N files / ...".
var streamTimingLine = regexp.MustCompile(`(?m)^(transferred|stream-cloned) .* seconds \(.*/sec\)\n`)

// TestUnbundleStream: hgfs unbundle of a v2 stream bundle (hg bundle -t
// 'none-v2;stream=v2', written by each Mercurial) does what that hg's
// unbundle does: into an empty repository (of the default format, and
// of another one whose own requirements the stream's format ones
// replace) it applies the stream, with hg's output, exit status,
// requirements, phases, bookmarks and hg log --debug; into a repository
// with history it aborts with hg's message and changes nothing. A
// packed1 bundle is refused by both, and a truncated stream bundle leaves
// the empty repository as it was (hgfs rolls it back).
func TestUnbundleStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	formats := map[string][]string{
		"default":   nil,
		"zlib-nogd": targetFormats["zlib-nogd"],
	}
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) {
			v2 := filepath.Join(dir, hg.Name+"-v2.hg")
			hg.Run(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2", v2)
			packed1 := filepath.Join(dir, hg.Name+"-packed1.hg")
			hg.Run(t, src, "debugcreatestreamclonebundle", packed1)
			data, err := os.ReadFile(v2)
			if err != nil {
				t.Fatal(err)
			}
			truncated := filepath.Join(dir, hg.Name+"-truncated.hg")
			os.WriteFile(truncated, data[:len(data)*2/3], 0o644)

			type result struct {
				out   string
				code  int
				state string
			}
			both := func(t *testing.T, name, bundle string, initArgs []string, commit bool) (hgRes, hgfsRes result) {
				for _, who := range []string{"hg", "hgfs"} {
					repo := filepath.Join(dir, hg.Name+"-"+name+"-"+who)
					hg.Run(t, dir, append([]string{"init", repo}, initArgs...)...)
					if commit {
						os.WriteFile(filepath.Join(repo, "x"), []byte("x\n"), 0o644)
						hg.Run(t, repo, "commit", "-qAm", "x", "-d", "0 0")
					}
					var r result
					if who == "hg" {
						o, e, err := hg.Result(t, repo, "unbundle", bundle)
						r.out = string(o) + string(e)
						if err != nil {
							r.code = 255
						}
					} else {
						o, e, code := hgfsIn(repo, "unbundle", bundle)
						r.out, r.code = o+e, code
					}
					r.out = streamTimingLine.ReplaceAllString(r.out, "")
					if who == "hgfs" {
						r.state = repoState(t, repo, true)
					} else {
						r.state = repoState(t, repo, false)
					}
					if who == "hg" {
						hgRes = r
					} else {
						hgfsRes = r
					}
				}
				return hgRes, hgfsRes
			}
			for name, initArgs := range formats {
				t.Run("empty-"+name, func(t *testing.T) {
					want, got := both(t, "empty-"+name, v2, initArgs, false)
					if got.code != 0 || want.code != 0 {
						t.Fatalf("exit: hg %d, hgfs %d\n%s\n%s", want.code, got.code, want.out, got.out)
					}
					if got.out != want.out {
						t.Errorf("output differs:\n%s", testenv.Diff(hg.Name, want.out, "hgfs", got.out))
					}
					if got.state != want.state {
						t.Errorf("repository differs:\n%s", testenv.Diff(hg.Name, want.state, "hgfs", got.state))
					}
					// The fixture's draft and bookmarks: the stream carries
					// phaseroots, not the bookmarks (none in the bundle).
					if !strings.Contains(got.state, "\nphase:       draft\n") {
						t.Errorf("the draft changeset did not stay draft:\n%s", got.state)
					}
				})
			}
			t.Run("non-empty", func(t *testing.T) {
				want, got := both(t, "nonempty", v2, nil, true)
				if got.code != 255 || want.code != 255 || got.out != want.out || got.out != "abort: cannot apply stream clone to non empty repository\n" {
					t.Errorf("hg: exit %d %q; hgfs: exit %d %q", want.code, want.out, got.code, got.out)
				}
				if got.state != want.state {
					t.Errorf("repository differs:\n%s", testenv.Diff(hg.Name, want.state, "hgfs", got.state))
				}
			})
			t.Run("packed1", func(t *testing.T) {
				want, got := both(t, "packed1", packed1, nil, false)
				if got.code != 255 || want.code != 255 || !strings.HasPrefix(got.out, "abort: packed bundles cannot be applied with \"hgfs unbundle\"\n") {
					t.Errorf("hg: exit %d %q; hgfs: exit %d %q", want.code, want.out, got.code, got.out)
				}
				if got.state != want.state {
					t.Errorf("repository differs:\n%s", testenv.Diff(hg.Name, want.state, "hgfs", got.state))
				}
			})
			t.Run("truncated", func(t *testing.T) {
				want, got := both(t, "truncated", truncated, nil, false)
				if got.code != 255 || want.code != 255 {
					t.Errorf("hg: exit %d %q; hgfs: exit %d %q", want.code, want.out, got.code, got.out)
				}
				empty := filepath.Join(dir, hg.Name+"-truncated-fresh")
				hg.Run(t, dir, "init", empty)
				if fresh := repoState(t, empty, false); got.state != fresh {
					t.Errorf("not rolled back:\n%s", testenv.Diff("fresh", fresh, "hgfs", got.state))
				}
				// Nothing left: no file, no directory, no journal.
				if f, g := hgFiles(t, empty), hgFiles(t, filepath.Join(dir, hg.Name+"-truncated-hgfs")); f != g {
					t.Errorf("files left:\n%s", testenv.Diff("fresh", f, "hgfs", g))
				}
			})
		})
	}
}

// hgFiles lists what .hg holds, one path a line.
func hgFiles(t *testing.T, repo string) string {
	t.Helper()
	var b strings.Builder
	root := filepath.Join(repo, ".hg")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b.WriteString(filepath.ToSlash(rel) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
