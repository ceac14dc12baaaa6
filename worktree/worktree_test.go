package worktree_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/worktree"
)

var v2Allow = testenv.DirstateV2Allow

// Tree is the working copy at root, as testenv lists it.
func Tree(t testing.TB, root string) string { return testenv.WorkingCopy(t, root) }

func debugstate(t testing.TB, hg testenv.Mercurial, dir string) string { return hg.Debugstate(t, dir) }

func update(t testing.TB, dir string, rev int, opt worktree.Options) (*worktree.Result, error) {
	t.Helper()
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return worktree.Update(context.Background(), r, rev, opt)
}

// TestUpdateMatchesHg moves an hgfs working copy and an hg one through
// the same revisions (from null, forwards, backwards, across branches,
// to null) of a history with renames, exec bits, symlinks, empty files
// and removed directories, in dirstate v1 and v2: the files, hg status
// and hg debugstate (modes, sizes, states) must be hg's, for hg 6.3 and 7.
func TestUpdateMatchesHg(t *testing.T) {
	t.Parallel()
	spec := testenv.Rich
	spec.Empty = true
	src := testenv.Generate(t, spec)
	hgs := testenv.Mercurials(t)
	for _, v2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "v1", true: "v2"}[v2], func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			mine, theirs := filepath.Join(base, "hgfs"), filepath.Join(base, "hg")
			cl := append([]string{"clone", "-q", "-U", "--config", "format.use-dirstate-v2=" + strconv.FormatBool(v2)}, v2Allow...)
			hgs[0].Run(t, "", append(cl, src, mine)...)
			hgs[0].Run(t, "", append(cl, src, theirs)...)
			n := len(hgs[0].Run(t, theirs, append([]string{"log", "--hidden", "-T", "x"}, v2Allow...)...))
			revs := []int{0, n - 1, 1, n / 2, revlog.NullRev, n - 2, 2}
			for i, rev := range revs {
				if rev >= n {
					continue
				}
				sym := strconv.Itoa(rev)
				if rev == revlog.NullRev {
					sym = "null"
				}
				hgs[0].Run(t, theirs, append([]string{"update", "-q", "-C", "--hidden", "-r", sym}, v2Allow...)...)
				if _, err := update(t, mine, rev, worktree.Options{}); err != nil {
					t.Fatalf("update %d: %v", rev, err)
				}
				if g, w := Tree(t, mine), Tree(t, theirs); g != w {
					t.Fatalf("rev %d: working copy differs from hg's:\n%s", rev, testenv.Diff("hg", w, "hgfs", g))
				}
				for _, hg := range hgs {
					if g, w := debugstate(t, hg, mine), debugstate(t, hg, theirs); g != w {
						t.Errorf("rev %d: %s debugstate\n%s\nwant\n%s", rev, hg.Name, g, w)
					}
					if b, _ := os.ReadFile(filepath.Join(mine, ".hg", "branch")); rev >= 0 && !bytes.Equal(b, mustRead(t, filepath.Join(theirs, ".hg", "branch"))) {
						t.Errorf("rev %d: .hg/branch %q", rev, b)
					}
				}
				for _, hg := range hgs {
					if out := hg.Run(t, mine, append([]string{"status", "--hidden"}, v2Allow...)...); len(out) != 0 {
						t.Errorf("rev %d: %s status:\n%s", rev, hg.Name, out)
					}
					// An empty status leaves diff nothing to show: it is
					// run once, after the last update.
					if i < len(revs)-1 {
						continue
					}
					if out := hg.Run(t, mine, append([]string{"diff"}, v2Allow...)...); len(out) != 0 {
						t.Errorf("rev %d: %s diff:\n%s", rev, hg.Name, out)
					}
				}
				if _, err := os.Stat(filepath.Join(mine, ".hg", "updatestate")); err == nil {
					t.Errorf("rev %d: updatestate left behind", rev)
				}
			}
		})
	}
}

func mustRead(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDirtyRefused: a changed, a removed and an added file each make the
// update refuse without Clean, leaving the working copy alone; Clean
// discards them as hg update -C does.
func TestDirtyRefused(t *testing.T) {
	t.Parallel()
	src := testenv.Generate(t, testenv.Spec{Files: 3, Revisions: 2})
	hg := testenv.Default(t)
	for _, change := range []string{"modify", "delete", "add", "chmod"} {
		t.Run(change, func(t *testing.T) {
			t.Parallel()
			wc := filepath.Join(t.TempDir(), "wc")
			hg.Run(t, "", "clone", "-q", src, wc)
			f := filepath.Join(wc, "f", "000", "file0000.txt")
			switch change {
			case "modify":
				// Same size, so only the contents tell.
				data := mustRead(t, f)
				data[0] ^= 1
				os.WriteFile(f, data, 0o644)
			case "delete":
				os.Remove(f)
			case "add":
				os.WriteFile(filepath.Join(wc, "new"), []byte("x"), 0o644)
				hg.Run(t, wc, "add", "new")
			case "chmod":
				os.Chmod(f, 0o755)
			}
			before := Tree(t, wc)
			_, err := update(t, wc, 0, worktree.Options{})
			if !errors.Is(err, worktree.ErrDirty) {
				t.Fatalf("update of a dirty working copy: %v", err)
			}
			if Tree(t, wc) != before {
				t.Fatal("the refused update changed the working copy")
			}
			if _, err := update(t, wc, 0, worktree.Options{Clean: true}); err != nil {
				t.Fatal(err)
			}
			st := string(hg.Run(t, wc, "status"))
			if change == "add" {
				if st != "? new\n" {
					t.Errorf("status after -C: %q", st)
				}
			} else if st != "" {
				t.Errorf("status after -C: %q", st)
			}
		})
	}
}

// TestInterrupted stops checkouts after a few files (as SIGINT does,
// through the context): a new clone's checkout leaves no dirstate (the
// null parent), an update's leaves the old parent with every file it was
// changing unverified, never claimed clean; hg status then lists the
// files actually changed, and hg update -C repairs the working copy.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	src := testenv.Generate(t, testenv.Spec{Files: 40, Revisions: 3})
	hg := testenv.Default(t)
	for _, fresh := range []bool{true, false} {
		t.Run(map[bool]string{true: "clone", false: "update"}[fresh], func(t *testing.T) {
			t.Parallel()
			wc := filepath.Join(t.TempDir(), "wc")
			hg.Run(t, "", "clone", "-q", "-U", src, wc)
			if !fresh {
				if _, err := update(t, wc, 0, worktree.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := repo.Open(wc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = worktree.Update(ctx, r, r.Changelog().Len()-1, worktree.Options{Writers: 1, Progress: func(files int, _ int64) {
				if files >= 3 {
					cancel()
				}
			}})
			r.Close()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted update: %v", err)
			}
			if _, err := os.Stat(filepath.Join(wc, ".hg", "updatestate")); err != nil {
				t.Errorf("no updatestate after the interruption: %v", err)
			}
			parents := strings.TrimSpace(string(hg.Run(t, wc, "log", "-r", "p1()", "-T", "{rev}")))
			if fresh && parents != "" || !fresh && parents != "0" {
				t.Errorf("parent after the interruption: %q", parents)
			}
			if !fresh {
				// What status lists must be what differs from revision 0.
				st := string(hg.Run(t, wc, "status", "-mard"))
				if st == "" {
					t.Error("status shows nothing after an interrupted update that changed files")
				}
			}
			hg.Run(t, wc, "update", "-q", "-C", "tip")
			if st := hg.Run(t, wc, "status"); len(st) != 0 {
				t.Errorf("status after hg update -C: %s", st)
			}
		})
	}
}

// TestMtimesLearned: files whose mtimes an update could not record (too
// close to the dirstate write) are compared by content at the next
// update, as hg status does, through hg's hash rule (filelog.cmp) with
// the reconstruction behind it for copies and for contents starting with
// a metadata marker; found clean, their mtimes are recorded as hg
// status's fixup records them, so that the update after trusts them.
// Both hgs must agree that the result is clean.
func TestMtimesLearned(t *testing.T) {
	t.Parallel()
	hgs := testenv.Mercurials(t)
	hg := hgs[0]
	src := filepath.Join(t.TempDir(), "src")
	hg.Run(t, "", "init", src)
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain", "plain text\n")
	write("meta", "\x01\nstarts like copy metadata\n")
	hg.Run(t, src, "commit", "-q", "-A", "-m", "0", "-d", "0 0")
	hg.Run(t, src, "copy", "plain", "copied")
	hg.Run(t, src, "commit", "-q", "-m", "1", "-d", "0 0")
	write("other", "x\n")
	hg.Run(t, src, "commit", "-q", "-A", "-m", "2", "-d", "0 0")

	wc := filepath.Join(t.TempDir(), "wc")
	hg.Run(t, "", "clone", "-q", "-U", src, wc)
	if _, err := update(t, wc, 1, worktree.Options{}); err != nil {
		t.Fatal(err)
	}
	// Let the filesystem's clock leave the second of the files' mtimes,
	// so that what the next update learns of them is reliable.
	waitNextSecond(t, wc)
	if _, err := update(t, wc, 2, worktree.Options{}); err != nil {
		t.Fatalf("update over files with unrecorded mtimes: %v", err)
	}
	ds, err := dirstate.Read(filepath.Join(wc, ".hg"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ds.Entries {
		if e.Path == "other" {
			continue // just written
		}
		fi, err := os.Lstat(filepath.Join(wc, e.Path))
		if err != nil {
			t.Fatal(err)
		}
		if !e.HasMtime || e.Mtime.Sec != dirstate.TimestampOf(fi.ModTime().UnixNano()).Sec {
			t.Errorf("%s: dirstate mtime %+v (recorded %v), file's %v", e.Path, e.Mtime, e.HasMtime, fi.ModTime())
		}
	}
	for _, h := range hgs {
		if out := h.Run(t, wc, "status"); len(out) != 0 {
			t.Errorf("%s status:\n%s", h.Name, out)
		}
	}
}

// waitNextSecond waits until a file created in dir has an mtime in a
// later second than one created now.
func waitNextSecond(t *testing.T, dir string) {
	t.Helper()
	now := func() int64 {
		ts, err := dirstate.Now(filepath.Join(dir, ".hg"))
		if err != nil {
			t.Fatal(err)
		}
		return int64(ts.Sec)
	}
	for start := now(); now() == start; {
		time.Sleep(50 * time.Millisecond)
	}
}

// TestV2MtimesAfterTick: with dirstate-v2 (on Linux, not NFS), an update
// waits for the filesystem's clock to tick and records the mtime of every
// file it wrote, those in the last second flagged second-ambiguous, as
// hg 7 does; both hgs find the result clean, and a file then changed
// within the same second with its size kept is still seen modified.
func TestV2MtimesAfterTick(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("hgfs waits for the filesystem's tick on Linux only")
	}
	t.Parallel()
	hgs := testenv.Mercurials(t)
	src := testenv.Generate(t, testenv.Spec{Files: 30, Revisions: 2})
	wc := filepath.Join(t.TempDir(), "wc")
	hgs[0].Run(t, "", append([]string{"clone", "-q", "-U", "--config", "format.use-dirstate-v2=true", src, wc}, v2Allow...)...)
	res, err := update(t, wc, 1, worktree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dirstate.Read(filepath.Join(wc, ".hg"), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Entries) != res.Updated {
		t.Fatalf("%d entries, %d files written", len(ds.Entries), res.Updated)
	}
	for _, e := range ds.Entries {
		if !e.HasMtime {
			t.Errorf("%s: no mtime recorded", e.Path)
		}
	}
	for _, h := range hgs {
		if out := h.Run(t, wc, append([]string{"status"}, v2Allow...)...); len(out) != 0 {
			t.Errorf("%s status:\n%s", h.Name, out)
		}
	}
	f := filepath.Join(wc, ds.Entries[0].Path)
	data := mustRead(t, f)
	data[0] ^= 1
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, h := range hgs {
		if out := string(h.Run(t, wc, append([]string{"status"}, v2Allow...)...)); out != "M "+ds.Entries[0].Path+"\n" {
			t.Errorf("%s status after a change: %q", h.Name, out)
		}
	}
}
