package exchange

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	removeBaseRepos()
	os.Exit(code)
}

var errInjected = errors.New("injected failure")

// storeFiles maps every file under root/.hg to its bytes, leaving out the
// journal.* and undo.* copies a transaction leaves whether it commits or
// not, and caches.
func storeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	hg := filepath.Join(root, ".hg")
	err := filepath.Walk(hg, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(hg, p)
		base := filepath.Base(rel)
		if strings.HasPrefix(base, "undo") || strings.HasPrefix(base, "journal.") || strings.HasPrefix(rel, "cache") {
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFailureInsideApplyRollsBack injects a failure inside an apply (an
// error, a panic on the session's goroutine, in a group worker (the
// manifests' or a file's) or in a flush worker; groups applied on one
// goroutine and on four),
// after filelogs have reached the disk: the session must roll back and
// release its locks as hg's transaction does for any exception, and the
// failure must reach the caller (a panic goes on up unchanged). The
// repository is then as before: no journal, no lock, the same files, hg
// verify clean, the same tip, and a new session can begin.
func TestFailureInsideApplyRollsBack(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := testenv.Generate(t, testenv.Small)
	bundle := filepath.Join(dir, "more.hg")
	testenv.Hg(t, src, "bundle", "-q", "--base", "0", "-t", "none-v2", bundle)

	for _, tc := range []struct {
		name, at string
		nth      int64 // the failing call of the hook at that point
		panics   bool
		workers  int // Options.FileWorkers
	}{
		{"error", "file group", 3, false, 1},
		{"panic", "file group", 3, true, 1},
		{"panic-in-flush", "flush", 2, true, 1},
		{"error-workers", "file group", 3, false, 4},
		{"panic-workers", "file group", 3, true, 4},
		{"error-in-manifest-worker", "group apply", 1, false, 4},
		{"error-in-worker", "group apply", 3, false, 4},
		{"panic-in-worker", "group apply", 3, true, 4},
		{"panic-in-flush-workers", "flush", 2, true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(dir, tc.name)
			testenv.Hg(t, dir, "clone", "-q", "-U", "-r", "0", src, root)
			tip := string(testenv.Hg(t, root, "log", "-r", "tip", "-T", "{node}"))
			before := storeFiles(t, root)

			var calls atomic.Int64
			faultHook = func(at string) error {
				if at != tc.at || calls.Add(1) != tc.nth {
					return nil
				}
				if tc.panics {
					panic(errInjected)
				}
				return errInjected
			}
			defer func() { faultHook = nil }()

			var warn strings.Builder
			// Each filelog is written when its group ends, so the
			// failure comes after files have changed on disk.
			opt := Options{WriteBatch: -1, WLock: true, FileWorkers: tc.workers, Warn: func(m string) { warn.WriteString(m) }}
			recovered, err := applyBundleFile(t, root, bundle, opt)
			if calls.Load() < tc.nth {
				t.Fatalf("the fault point %q was reached %d times", tc.at, calls.Load())
			}
			if tc.panics {
				if recovered != errInjected {
					t.Errorf("panic %v, want the injected one (error %v)", recovered, err)
				}
			} else if !errors.Is(err, errInjected) || recovered != nil {
				t.Errorf("error %v, panic %v; want the injected error", err, recovered)
			}
			if warn.String() != "transaction abort!\nrollback completed\n" {
				t.Errorf("transaction messages %q", warn.String())
			}
			for _, name := range []string{".hg/store/journal", ".hg/store/lock", ".hg/wlock"} {
				if _, err := os.Lstat(filepath.Join(root, name)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s left behind (%v)", name, err)
				}
			}
			sameFiles(t, before, storeFiles(t, root), "changed or gone", "appeared")
			testenv.Hg(t, root, "verify", "-q")
			if got := string(testenv.Hg(t, root, "log", "-r", "tip", "-T", "{node}")); got != tip {
				t.Errorf("tip %s, was %s", got, tip)
			}
			// The locks are free for the next writer.
			s, err := Begin(context.Background(), root, "unbundle", Options{WLock: true})
			if err != nil {
				t.Fatalf("a new session: %v", err)
			}
			s.Abort()
		})
	}
}

// sameFiles reports each file of a (storeFiles) that b lacks or holds
// other bytes of ("NAME differ"), and each file only b has ("NAME only").
func sameFiles(t *testing.T, a, b map[string]string, differ, only string) {
	t.Helper()
	for name, data := range a {
		if b[name] != data {
			t.Errorf("%s %s", name, differ)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("%s %s", name, only)
		}
	}
}

// applyBundleFile applies a bundle file in a new session as hgfs
// unbundle does, returning the value of a panic or the error.
func applyBundleFile(t *testing.T, root, path string, opt Options) (recovered any, err error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := changegroup.OpenBundle(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Begin(context.Background(), root, "unbundle", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { recovered = recover() }()
	if _, err := s.ApplyBundle(context.Background(), b, BookmarksApply); err != nil {
		return nil, err
	}
	return nil, s.Commit()
}
