//go:build linux

package mount

import (
	"context"
	"fmt"
	"log"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/testenv"
)

// TestHandlerPanic: a panicking handler is logged with its operation's
// name, and go-fuse is told to answer EIO.
func TestHandlerPanic(t *testing.T) {
	var buf strings.Builder
	log.SetOutput(&buf)
	defer log.SetOutput(os.Stderr)
	before := handlerPanics.Load()
	func() {
		defer func() {
			if r := recover(); r != nil {
				handlerPanic(r)
			}
		}()
		var r *rawFS
		r.GetAttr(nil, nil, nil) // nil receiver: panics
	}()
	if handlerPanics.Load() != before+1 || !strings.Contains(buf.String(), "GetAttr: recovered panic") {
		t.Errorf("log %q, want a line naming GetAttr", buf.String())
	}
	if st := mountOptions(Options{}).PanicHandler("boom"); st != 5 { // EIO
		t.Errorf("PanicHandler answered %v, want EIO", st)
	}
}

// TestMountIndexDamage damages the index of a cache in a few seeded ways,
// mounts what Open accepts and reads everything with find and head (at
// most 4 MiB of each file: damage can make a size of a PiB), then makes
// a few changes and syncs: every
// request must be answered (EIO is fine) within a timeout, no handler
// may panic, and unmount and Close must finish. MOUNT_DAMAGE_RUNS sets the
// number of runs (default 6; make stress runs more).
func TestMountIndexDamage(t *testing.T) {
	testenv.RequireFUSE(t)
	for name, mnt := range damageMounts {
		t.Run(name, func(t *testing.T) { testMountIndexDamage(t, mnt) })
	}
}

// damageMounts are the adapters TestMountIndexDamage runs through
// (cgofuse's is added in builds with its tag).
var damageMounts = map[string]func(*fsnode.FS, string, Options) (testServer, error){
	"go-fuse": func(fsys *fsnode.FS, mp string, opt Options) (testServer, error) { return Mount(fsys, mp, opt) },
}

func testMountIndexDamage(t *testing.T, mnt func(*fsnode.FS, string, Options) (testServer, error)) {
	runs := 6
	if n, err := strconv.Atoi(os.Getenv("MOUNT_DAMAGE_RUNS")); err == nil && n > 0 {
		runs = n
	}
	tmpl := t.TempDir()
	buildCompactCache(t, tmpl)
	before := handlerPanics.Load()
	var refused, readErrors, hangs int
	for run := range runs {
		seed := int64(2000 + run)
		rng := rand.New(rand.NewSource(seed))
		dir, mp := t.TempDir(), t.TempDir()
		testenv.CopyFiles(t, tmpl, dir)
		what := damagePage(t, dir, rng)
		var fsys *fsnode.FS
		var err error
		if !testenv.Within(t, time.Minute, "opening "+dir, func() { fsys, err = fsnode.Open(dir, fsnode.Options{}) }) {
			hangs++
			continue
		}
		if err != nil {
			refused++
			continue
		}
		var srv testServer
		if !testenv.Within(t, time.Minute, "mounting "+mp, func() { srv, err = mnt(fsys, mp, Options{FsName: dir}) }) {
			hangs++
			continue
		}
		if err != nil {
			fsys.Close()
			t.Fatalf("seed %d (%s): mount: %v", seed, what, err)
		}
		for _, script := range []string{`find "$1" >/dev/null`, `find "$1" -type f -print0 | xargs -0 -r head -qc 4M >/dev/null`, `find "$1" -type l -print0 | xargs -0 -r readlink >/dev/null`,
			// Changes, committed by write transactions on the damaged file.
			`find "$1" -maxdepth 2 -type d | while read -r d; do echo new >"$d/new" && mv "$d/new" "$d/moved"; done; sync`} {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			cmd := exec.CommandContext(ctx, "sh", "-c", script, "sh", mp)
			// On the timeout the whole group goes (find, xargs and head
			// hold the output pipe), and Wait gives up on the pipe soon
			// after: a hung request is reported, not waited for.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 10 * time.Second
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				hangs++
				t.Errorf("seed %d (%s): %s did not finish: a request hung", seed, what, script)
			} else if err != nil {
				readErrors++
				t.Logf("seed %d (%s): %s: %v: %s", seed, what, script, err, firstLine(out))
			}
			cancel()
		}
		if !testenv.Within(t, time.Minute, "unmounting "+mp, func() { err = srv.Unmount() }) {
			hangs++
			srv.LazyUnmount()
			continue
		}
		if err != nil {
			select {
			case <-srv.Done():
				// Unmounted; the changes could not be committed.
			default:
				t.Errorf("seed %d (%s): unmount: %v", seed, what, err)
				srv.LazyUnmount()
			}
		}
		if !testenv.Within(t, time.Minute, "closing the cache", func() { fsys.Close() }) {
			hangs++
		}
	}
	panics := handlerPanics.Load() - before
	t.Logf("mount damage campaign: %d runs: %d refused by Open, %d commands with read errors, %d hangs, %d handler panics",
		runs, refused, readErrors, hangs, panics)
	if hangs > 0 || panics > 0 {
		t.Errorf("%d hangs, %d handler panics", hangs, panics)
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

// buildCompactCache makes a closed cache of directories, files (inline
// and over data files) and symlinks, whose index.db is then compacted so
// that no page is free: every page damaged is one in use.
func buildCompactCache(t *testing.T, dir string) {
	fsys, err := fsnode.Create(dir, fsnode.Options{CommitInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	for i := range 200 {
		p := fmt.Sprintf("d%d/e%d/f%03d", i%7, i%3, i)
		if _, err := fsys.MkdirAll(ctx, filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, rng.Intn(6000))
		if i%20 == 0 {
			data = make([]byte, 100<<10+rng.Intn(100<<10))
		}
		rng.Read(data)
		if err := fsys.WriteFile(ctx, p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			parent, err := fsys.LookupPath(ctx, filepath.Dir(p))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fsys.Symlink(ctx, parent.Ino, fmt.Sprintf("l%03d", i), filepath.Base(p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "index.db")
	src, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := bolt.Open(path+".new", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Compact(dst, src, 1<<20); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dst.Close()
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
}

// damagePage damages one page of dir's index.db past the meta pages.
func damagePage(t *testing.T, dir string, rng *rand.Rand) string {
	path := filepath.Join(dir, "index.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096
	page := 2 + rng.Intn(len(b)/ps-2)
	p := b[page*ps : (page+1)*ps]
	var what string
	switch rng.Intn(3) {
	case 0:
		n := 1 + rng.Intn(16)
		for range n {
			p[rng.Intn(ps)] ^= byte(1 + rng.Intn(255))
		}
		what = fmt.Sprintf("%d bytes of page %d flipped", n, page)
	case 1:
		rng.Read(p)
		what = fmt.Sprintf("page %d overwritten with random bytes", page)
	default:
		clear(p)
		what = fmt.Sprintf("page %d zeroed", page)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return what
}
