package repo

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestBranchesRevBranchCache checks Branches against each hg on the
// same revision branch cache, intact and damaged: hg's branchmap, with
// its branch2 caches removed, takes every revision's branch from the
// cache where the cache vouches for it, so a record naming another
// branch misleads hg and hgfs alike, and a record hg refuses (another
// node, an unknown name, zeros, a short file) is read from the
// changelog by both.
func TestBranchesRevBranchCache(t *testing.T) {
	for _, m := range testenv.Mercurials(t) {
		t.Run(m.Name, func(t *testing.T) {
			base := t.TempDir()
			src := filepath.Join(base, "src")
			m.Run(t, base, "init", src)
			commit := func(msg string, args ...string) {
				t.Helper()
				f := filepath.Join(src, "f")
				old, _ := os.ReadFile(f)
				if err := os.WriteFile(f, append(old, msg+"\n"...), 0o644); err != nil {
					t.Fatal(err)
				}
				m.Run(t, src, append([]string{"commit", "-q", "-A", "-u", "test", "-d", "0 0", "-m", msg}, args...)...)
			}
			commit("a")
			commit("b")
			m.Run(t, src, "branch", "-q", "stable")
			commit("c")
			commit("d")
			m.Run(t, src, "branch", "-q", "feature")
			commit("e")
			commit("close feature", "--close-branch")
			m.Run(t, src, "update", "-q", "default")
			commit("f")
			m.Run(t, src, "update", "-q", "stable")
			commit("g")
			m.Run(t, src, "branch", "-q", "-f", "default")
			commit("h")
			m.Run(t, src, "debugupdatecaches")

			version := "-v1"
			if _, err := os.Stat(filepath.Join(src, ".hg", "cache", "rbc-revs-v2")); err == nil {
				version = "-v2"
			}
			revsFile := filepath.Join(".hg", "cache", "rbc-revs"+version)
			namesFile := filepath.Join(".hg", "cache", "rbc-names"+version)
			if _, err := os.Stat(filepath.Join(src, revsFile)); err != nil {
				t.Fatalf("%s wrote no revision branch cache: %v", m.Name, err)
			}
			names := strings.Split(string(readFile(t, filepath.Join(src, namesFile))), "\x00")
			nameIndex := func(name string) uint32 {
				i := slices.Index(names, name)
				if i < 0 {
					t.Fatalf("no %q in %q", name, names)
				}
				return uint32(i)
			}
			record := func(revs []byte, rev int) []byte { return revs[rev*rbcRecordSize : (rev+1)*rbcRecordSize] }

			// misleads: the damage changes what the cache says, and both
			// believe it (the cases that differ from "intact" prove the
			// cache is read).
			cases := []struct {
				name     string
				misleads bool
				damage   func(t *testing.T, dir string)
			}{
				{"intact", false, func(*testing.T, string) {}},
				{"record naming another branch", true, func(t *testing.T, dir string) {
					editFile(t, filepath.Join(dir, revsFile), func(b []byte) []byte {
						rec := record(b, 8) // "h", default's tip
						idx := binary.BigEndian.Uint32(rec[4:])
						binary.BigEndian.PutUint32(rec[4:], idx&rbcCloseFlag|nameIndex("stable"))
						return b
					})
				}},
				{"close flag on an open head", true, func(t *testing.T, dir string) {
					editFile(t, filepath.Join(dir, revsFile), func(b []byte) []byte {
						rec := record(b, 8) // "h", default's tip
						binary.BigEndian.PutUint32(rec[4:], binary.BigEndian.Uint32(rec[4:])|rbcCloseFlag)
						return b
					})
				}},
				{"another node from a revision on", false, func(t *testing.T, dir string) {
					editFile(t, filepath.Join(dir, revsFile), func(b []byte) []byte {
						record(b, 3)[0] ^= 0xff
						// Later records naming another branch are not
						// used once one record disagrees.
						rec := record(b, 5)
						binary.BigEndian.PutUint32(rec[4:], nameIndex("default"))
						return b
					})
				}},
				{"unknown name index", false, func(t *testing.T, dir string) {
					editFile(t, filepath.Join(dir, revsFile), func(b []byte) []byte {
						binary.BigEndian.PutUint32(record(b, 4)[4:], uint32(len(names)+3))
						return b
					})
				}},
				{"zero record", false, func(t *testing.T, dir string) {
					editFile(t, filepath.Join(dir, revsFile), func(b []byte) []byte {
						clear(record(b, 1))
						return b
					})
				}},
				{"short revs file", false, func(t *testing.T, dir string) {
					editFile(t, filepath.Join(dir, revsFile), func(b []byte) []byte { return b[:3*rbcRecordSize+5] })
				}},
				{"no names file", false, func(t *testing.T, dir string) {
					if err := os.Remove(filepath.Join(dir, namesFile)); err != nil {
						t.Fatal(err)
					}
				}},
				{"no cache", false, func(t *testing.T, dir string) {
					for _, f := range []string{revsFile, namesFile} {
						if err := os.Remove(filepath.Join(dir, f)); err != nil {
							t.Fatal(err)
						}
					}
				}},
			}
			var intact string
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					dir := testenv.CopyRepo(t, src)
					matches, _ := filepath.Glob(filepath.Join(dir, ".hg", "cache", "branch2-*"))
					for _, f := range matches {
						if err := os.Remove(f); err != nil {
							t.Fatal(err)
						}
					}
					c.damage(t, dir)
					r, err := Open(dir)
					if err != nil {
						t.Fatal(err)
					}
					bs, err := r.Branches()
					r.Close()
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, b := range bs {
						got = append(got, fmt.Sprintf("%s %d %v", b.Name, b.Tip, b.AllClosed()))
					}
					// hg reads the damaged cache (and repairs it) here.
					out := m.Run(t, dir, "branches", "-c", "-T", "{branch} {rev} {closed}\n")
					wantLines := strings.Split(strings.ToLower(strings.TrimSpace(string(out))), "\n")
					slices.Sort(wantLines)
					if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
						t.Errorf("Branches:\n%s\n%s branches -c:\n%s", strings.Join(got, "\n"), m.Name, strings.Join(wantLines, "\n"))
					}
					switch res := strings.Join(got, "\n"); {
					case c.name == "intact":
						intact = res
					case c.misleads == (res == intact):
						t.Errorf("misleads %v, but Branches is\n%s\nand intact\n%s", c.misleads, res, intact)
					}
				})
			}
		})
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func editFile(t *testing.T, name string, edit func([]byte) []byte) {
	t.Helper()
	if err := os.WriteFile(name, edit(readFile(t, name)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzRevBranchCache: any cache files give an answer or none, never a
// panic, and an answer only for a record naming the changeset's node.
func FuzzRevBranchCache(f *testing.F) {
	f.Add([]byte("default\x00stable"), []byte("\x01\x02\x03\x04\x00\x00\x00\x01\x01\x02\x03\x04\x80\x00\x00\x00"), 3)
	f.Fuzz(func(t *testing.T, names, revs []byte, n int) {
		n = max(0, min(n, 64))
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".hg", "cache"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"rbc-names-v2": names, "rbc-revs-v2": revs} {
			if err := os.WriteFile(filepath.Join(dir, ".hg", "cache", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := &Repo{hg: os.DirFS(filepath.Join(dir, ".hg"))}
		c := r.readRevBranchCache(n)
		var node [20]byte
		copy(node[:], "\x01\x02\x03\x04")
		for rev := range n {
			if _, _, ok := c.info(rev, node); ok && string(revs[rev*8:rev*8+4]) != string(node[:4]) {
				t.Fatalf("rev %d: an answer from a record of another node", rev)
			}
		}
	})
}
