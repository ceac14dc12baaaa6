package worktree_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/worktree"
)

// TestCheckoutSink checks a new clone out into an hgfs cache holding its
// store (as clone --mount does), in dirstate v1 and v2: what the cache
// then holds, copied out file by file with its recorded attributes, is
// the working copy hg update writes (contents, modes, symlinks), hg 6.3
// and 7 read its dirstate as they read hg's (states, modes, sizes) with
// every mtime recorded, and each recorded mode, size and mtime is what
// the cache reports for the file.
func TestCheckoutSink(t *testing.T) {
	t.Parallel()
	spec := testenv.Rich
	// No markers: hg makes no stream bundle of a repository with them.
	spec.Empty, spec.Obsolete = true, false
	src := testenv.Generate(t, spec)
	hgs := testenv.Mercurials(t)
	for _, v2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "v1", true: "v2"}[v2], func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			theirs := filepath.Join(base, "hg")
			cl := append([]string{"clone", "-q", "-U", "--config", "format.use-dirstate-v2=" + strconv.FormatBool(v2)}, v2Allow...)
			hgs[0].Run(t, "", append(cl, src, theirs)...)
			hgs[0].Run(t, theirs, append([]string{"update", "-q", "tip"}, v2Allow...)...)

			f, err := fsnode.Create(filepath.Join(base, "cache"), fsnode.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			streamIn(t, hgs[0], f.Sink(), src, v2)
			sink := f.Sink()
			hg, err := fs.Sub(f.FS(), ".hg")
			if err != nil {
				t.Fatal(err)
			}
			r, err := repo.OpenFS(hg)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			before := time.Now()
			res, err := worktree.CheckoutSink(context.Background(), r, r.Changelog().Len()-1, sink, worktree.Options{Writers: 3})
			if err != nil {
				t.Fatal(err)
			}
			if err := sink.Finish(); err != nil {
				t.Fatal(err)
			}
			if res.Updated == 0 {
				t.Fatalf("updated %d files", res.Updated)
			}
			out := filepath.Join(base, "out")
			copyOut(t, f, out)
			if m, _ := filepath.Glob(filepath.Join(out, ".hg", "dirstate.*")); v2 != (len(m) == 1) {
				t.Errorf("dirstate-v2 data files: %v", m)
			}
			if g, w := Tree(t, out), Tree(t, theirs); g != w {
				t.Fatalf("working copy differs from hg's:\n%s", testenv.Diff("hg", w, "hgfs", g))
			}
			for _, hg := range hgs {
				raw := string(hg.Run(t, out, append([]string{"debugstate", "--no-dates"}, v2Allow...)...))
				if strings.Contains(raw, " unset ") {
					t.Errorf("%s: files recorded without mtime:\n%s", hg.Name, raw)
				}
				if g, w := testenv.WithoutDates(raw), debugstate(t, hg, theirs); g != w {
					t.Errorf("%s debugstate differs:\n%s", hg.Name, testenv.Diff("hg", w, "hgfs", g))
				}
			}
			// The recorded attributes are the cache's: what the mount
			// will report for each file.
			ds := hgs[0].Run(t, out, append([]string{"debugstate"}, v2Allow...)...)
			for _, line := range strings.Split(strings.TrimSpace(string(ds)), "\n") {
				fields := strings.Fields(line)
				path := fields[len(fields)-1]
				a, err := f.LookupPath(context.Background(), path)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				size, _ := strconv.Atoi(fields[2])
				if uint64(size) != a.Size {
					t.Errorf("%s: recorded size %d, cache %d", path, size, a.Size)
				}
				if a.Mode&syscall.S_IFMT == syscall.S_IFLNK != (fields[1] == "lnk") || fields[1] != "lnk" && fields[1] != strconv.FormatUint(uint64(a.Mode&0o777), 8) {
					t.Errorf("%s: recorded mode %s, cache %o", path, fields[1], a.Mode)
				}
				if !a.Mtime.Before(before.Truncate(time.Second)) {
					t.Errorf("%s: mtime %v not before the checkout's second (%v)", path, a.Mtime, before)
				}
				if got := a.Mtime.UTC().Format("2006-01-02 15:04:05"); got != fields[3]+" "+fields[4] {
					t.Errorf("%s: recorded mtime %s %s, cache %s", path, fields[3], fields[4], got)
				}
			}
		})
	}
}

// streamIn applies the stream bundle of src that hg makes into sink, as
// clone --mount does, with the working-directory requirement of
// dirstate-v2 if v2.
func streamIn(t *testing.T, hg testenv.Mercurial, sink *fsnode.Sink, src string, v2 bool) {
	t.Helper()
	bundle := filepath.Join(t.TempDir(), "stream.hg")
	hg.Run(t, "", "-R", src, "--config", "server.uncompressedallowsecret=true", "bundle", "-q", "-a", "-t", "none-v2;stream=v2", bundle)
	f, err := os.Open(bundle)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs := store.DefaultRequirements()
	if v2 {
		reqs = reqs.Union(store.NewRequirements(store.ReqDirstateV2))
	}
	if _, err := streamclone.ApplyBundle(context.Background(), f, sink, streamclone.Options{DefaultRequirements: reqs.List()}); err != nil {
		t.Fatal(err)
	}
}

// copyOut copies everything in the cache to dir: files with their
// permission bits, symlinks, directories.
func copyOut(t *testing.T, f *fsnode.FS, dir string) {
	t.Helper()
	ctx := context.Background()
	err := fs.WalkDir(f.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		a, err := f.LookupPath(ctx, p)
		if err != nil {
			return err
		}
		switch a.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			return os.MkdirAll(dst, 0o755)
		case syscall.S_IFLNK:
			tg, err := f.Readlink(ctx, a.Ino)
			if err != nil {
				return err
			}
			return os.Symlink(tg, dst)
		}
		data, err := fs.ReadFile(f.FS(), p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			return err
		}
		return os.Chmod(dst, fs.FileMode(a.Mode&0o777))
	})
	if err != nil {
		t.Fatal(err)
	}
}
