//go:build unix

package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/hgfs/hgfs/internal/sysio"
	"github.com/hgfs/hgfs/internal/uring"
)

// sameFile compares walk results, content included.
func sameFile(a, b File) bool {
	return a.Name == b.Name && a.Path == b.Path && a.Size == b.Size && a.Volatile == b.Volatile && bytes.Equal(a.Data, b.Data) && (a.Data == nil) == (b.Data == nil)
}

// diffFiles reports where a walk's result differs from the fs.FS walk's.
func diffFiles(t *testing.T, what string, got, want []File) {
	t.Helper()
	if slices.EqualFunc(got, want, sameFile) {
		return
	}
	for i := range max(len(got), len(want)) {
		var g, w File
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !sameFile(g, w) {
			t.Errorf("%s entry %d: %+v, fs.FS walk: %+v", what, i, g, w)
		}
	}
}

// fsWalk is Walk through the generic fs.FS walker: the reference the
// descriptor-based walker must match.
func fsWalk(t *testing.T, st *Store) ([]File, error) {
	t.Helper()
	ref := *st
	ref.fsys = os.DirFS(st.Dir)
	if _, ok := ref.walker(0).(fsWalker); !ok {
		t.Fatal("reference store does not use fsWalker")
	}
	return ref.Walk()
}

// TestSysWalkerMatchesFS compares the unix walk (directory descriptors,
// fstatat) with the fs.FS one on stores holding what the walk must treat
// as hg does: odd revlog names, symlinks (followed for fncache entries,
// neither file nor directory when listing), fncache entries whose file or
// directory is missing, more directories than the descriptor cache holds.
func TestSysWalkerMatchesFS(t *testing.T) {
	t.Parallel()
	for _, l := range []Layout{LayoutBasic, LayoutEncoded, LayoutFncache, LayoutDotencode} {
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			root := copyTree(t, layoutRepo(t, l))
			st, err := Open(root)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := st.walker(0).(*sysWalker); !ok {
				t.Fatalf("store on disk walked with %T", st.walker(0))
			}
			addOddFiles(t, st)
			mkfile := func(rel string, size int) {
				p := filepath.Join(st.Dir, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			symlink := func(target, rel string) {
				if err := os.Symlink(target, filepath.Join(st.Dir, filepath.FromSlash(rel))); err != nil {
					t.Fatal(err)
				}
			}
			var extra []string
			for i := range sysio.MaxDirs + 5 {
				name := "data/many/d" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "/f.i"
				extra = append(extra, name)
				mkfile(st.Encode(name), i+1)
			}
			symlink("00changelog.i", "link.i")
			if st.Layout.HasFncache() {
				mkfile(st.Encode("data/target.i"), 33)
				symlink(filepath.Base(st.Encode("data/target.i")), st.Encode("data/symlinked.i"))
				extra = append(extra, "data/symlinked.i", "data/target.i", "data/nodir/x.i", "data/many/nope/y.i")
				f, err := os.OpenFile(filepath.Join(st.Dir, "fncache"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range extra {
					f.WriteString(EncodeDir(n) + "\n")
				}
				f.Close()
			} else {
				symlink("many", filepath.Dir(st.Encode("data/linkdir/x.i")))
			}

			want, err := fsWalk(t, st)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Walk()
			if err != nil {
				t.Fatal(err)
			}
			// And without io_uring (a kernel or sandbox without it).
			w := st.walker(0).(*sysWalker)
			if w.ring != nil {
				w.ring.close()
				w.ring = nil
			} else {
				t.Log("io_uring not available: only the system call walk is tested")
			}
			got2, err := st.walkWith(w)
			w.close()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got2, got, sameFile) {
				t.Error("the walk without io_uring differs from the one with")
			}
			diffFiles(t, "walk", got, want)
			// WalkRead: the same files and sizes; what it read is each
			// file's content. The budget runs out part way.
			for _, budget := range []int64{1 << 30, 200} {
				read, err := st.WalkRead(budget)
				if err != nil {
					t.Fatal(err)
				}
				nread, total := 0, int64(0)
				stripped := slices.Clone(read)
				for i, r := range read {
					stripped[i].Data = nil
					if r.Data == nil {
						continue
					}
					nread++
					total += int64(len(r.Data))
					if disk, err := os.ReadFile(filepath.Join(st.Dir, filepath.FromSlash(r.Path))); err != nil || !bytes.Equal(disk, r.Data) || int64(len(r.Data)) != r.Size {
						t.Errorf("WalkRead(%d) %s: read %d bytes (size %d), on disk %d (%v)", budget, r.Name, len(r.Data), r.Size, len(disk), err)
					}
				}
				diffFiles(t, fmt.Sprintf("WalkRead(%d)", budget), stripped, want)
				if total > budget {
					t.Errorf("WalkRead(%d) read %d bytes", budget, total)
				}
				// Only fncache stores' data files are read (the
				// listed layouts stat what they list); Linux only.
				if r := newStatRing(); r != nil {
					r.close()
					if st.Layout.HasFncache() && budget > 1<<20 && nread == 0 {
						t.Errorf("WalkRead(%d) read no file", budget)
					}
				}
			}
			names := map[string]bool{}
			for _, f := range got {
				names[f.Name] = true
			}
			for _, n := range []string{"data/many/daa/f.i", "data/many/dbc/f.i"} {
				if !names[n] {
					t.Errorf("walk misses %s", n)
				}
			}
			if st.Layout.HasFncache() && !names["data/symlinked.i"] {
				t.Error("walk does not follow the fncache entry's symlink, as hg's stat does")
			}
			if names["link.i"] {
				t.Error("walk lists a top-level symlink as a revlog")
			}
		})
	}
}

// TestSysWalkerErrors checks that a failing stat fails both walks alike:
// an fncache entry below a regular file (ENOTDIR, not a missing file).
func TestSysWalkerErrors(t *testing.T) {
	t.Parallel()
	root := copyTree(t, layoutRepo(t, LayoutDotencode))
	st, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st.Dir, "data", "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(st.Dir, "fncache"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("data/plain/x.i\n")
	f.Close()
	_, err = st.Walk()
	_, ref := fsWalk(t, st)
	if err == nil || ref == nil || err.Error() != ref.Error() {
		t.Errorf("Walk error %v, fs.FS walk error %v", err, ref)
	}
}

// BenchmarkWalk times Walk on a store (HGFS_BENCH_REPO, e.g. make bench's
// cached large-20000 repository, else the dotencode test repository)
// through the fs.FS walk, the system call walk and the io_uring one.
func BenchmarkWalk(b *testing.B) {
	root := os.Getenv("HGFS_BENCH_REPO")
	if root == "" {
		root = layoutRepo(b, LayoutDotencode)
	}
	st, err := Open(root)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, walker func() storeFS) {
		for b.Loop() {
			w := walker()
			if _, err := st.walkWith(w); err != nil {
				b.Fatal(err)
			}
			w.close()
		}
	}
	b.Run("fs", func(b *testing.B) {
		ref := *st
		ref.fsys = os.DirFS(st.Dir)
		run(b, func() storeFS { return ref.walker(0) })
	})
	b.Run("syscalls", func(b *testing.B) {
		run(b, func() storeFS {
			w := st.walker(0).(*sysWalker)
			if w.ring != nil {
				w.ring.close()
				w.ring = nil
			}
			return w
		})
	})
	b.Run("walker", func(b *testing.B) { run(b, func() storeFS { return st.walker(0) }) })
}

// forkStore is a store large enough for the walk to take its fncache
// chunks on several walkers, some entries missing on disk; appendFncache
// adds entries to its fncache.
func forkStore(t *testing.T) (st *Store, appendFncache func(names ...string)) {
	t.Helper()
	root := copyTree(t, layoutRepo(t, LayoutDotencode))
	st, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.walker(0).(interface{ fork() storeFS }); !ok {
		t.Fatalf("store on disk walked with %T, which does not fork", st.walker(0))
	}
	var extra []string
	for i := range 12 * statChunk {
		name := fmt.Sprintf("data/d%02d/f%04d.i", i/100, i)
		if i%97 == 5 {
			extra = append(extra, name) // in the fncache, missing on disk
			continue
		}
		p := filepath.Join(st.Dir, filepath.FromSlash(st.Encode(name)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte{byte(i)}, i%300+1), 0o644); err != nil {
			t.Fatal(err)
		}
		extra = append(extra, name)
	}
	appendFncache = func(names ...string) {
		f, err := os.OpenFile(filepath.Join(st.Dir, "fncache"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			f.WriteString(EncodeDir(n) + "\n")
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	appendFncache(extra...)
	if nchunks := len(extra) / statChunk; nchunks < 4 {
		t.Fatalf("only %d chunks: the walk would not fork", nchunks)
	}
	return st, appendFncache
}

// compareWalks checks that Walk and WalkRead give want (the fs.FS
// walk's files), WalkRead's content being the files' on disk.
func compareWalks(t *testing.T, st *Store, want []File) {
	t.Helper()
	got, err := st.Walk()
	if err != nil {
		t.Fatal(err)
	}
	diffFiles(t, "walk", got, want)
	read, err := st.WalkRead(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range read {
		if r.Data != nil {
			if disk, err := os.ReadFile(filepath.Join(st.Dir, filepath.FromSlash(r.Path))); err != nil || !bytes.Equal(disk, r.Data) {
				t.Fatalf("WalkRead %s: read %d bytes, on disk %d (%v)", r.Name, len(r.Data), len(disk), err)
			}
		}
		read[i].Data = nil
	}
	diffFiles(t, "WalkRead", read, want)
}

// TestWalkTuneWalkers: with one walker (HGFS_TUNE=-walkfork) or more
// than the default, Walk and WalkRead list the files the fs.FS walk
// lists.
func TestWalkTuneWalkers(t *testing.T) {
	t.Parallel()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 3)))
	st, _ := forkStore(t)
	want, err := fsWalk(t, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 0, 3} {
		t.Run(fmt.Sprintf("walkers=%d", n), func(t *testing.T) {
			one := *st
			one.Walkers = n
			compareWalks(t, &one, want)
		})
	}
}

// TestWalkTuneNoUring: with io_uring switched off (HGFS_TUNE=-uring),
// the walk stats and reads with system calls and lists the same files.
// Not parallel: the switch is the process's.
func TestWalkTuneNoUring(t *testing.T) {
	st, _ := forkStore(t)
	want, err := fsWalk(t, st)
	if err != nil {
		t.Fatal(err)
	}
	defer uring.SetEnabled(uring.SetEnabled(false))
	w := st.walker(1 << 20).(*sysWalker)
	if w.ring != nil {
		t.Error("a walk made a ring with io_uring switched off")
	}
	w.close()
	compareWalks(t, st, want)
}

// TestWalkForkMatchesFS: a store large enough for the walk to take its
// fncache chunks on two walkers gives the serial fs.FS walk's files, in
// its order, and its first error: a stat failing late, a corrupt entry
// after it, or the corrupt entry alone.
func TestWalkForkMatchesFS(t *testing.T) {
	t.Parallel()
	st, appendFncache := forkStore(t)
	want, err := fsWalk(t, st)
	if err != nil {
		t.Fatal(err)
	}
	compareWalks(t, st, want)

	// Errors, late in the walk: the first in fncache order wins.
	if err := os.WriteFile(filepath.Join(st.Dir, "data", "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(t.TempDir(), "fncache")
	if err := os.Rename(filepath.Join(st.Dir, "fncache"), corrupt); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range [][]string{
		{"data/plain/x.i", "data/zz/y.i", "data/not-a-revlog.txt"},
		{"data/zz/y.i", "data/not-a-revlog.txt", "data/plain/x.i"},
	} {
		if err := os.WriteFile(filepath.Join(st.Dir, "fncache"), orig, 0o644); err != nil {
			t.Fatal(err)
		}
		appendFncache(tail...)
		_, err := st.Walk()
		_, ref := fsWalk(t, st)
		if err == nil || ref == nil || err.Error() != ref.Error() {
			t.Errorf("%q: Walk error %v, fs.FS walk error %v", tail, err, ref)
		}
		_, err = st.WalkRead(1 << 30)
		if err == nil || err.Error() != ref.Error() {
			t.Errorf("%q: WalkRead error %v, fs.FS walk error %v", tail, err, ref)
		}
	}
}
