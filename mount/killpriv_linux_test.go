//go:build linux

package mount

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hgfs/hgfs/fsnode"
)

// nobodyID is the uid and gid the privilege tests write as.
const nobodyID = 65534

// capValue is a valid security.capability value (revision 2, effective,
// CAP_NET_RAW permitted), which the kernel accepts from root.
var capValue = []byte{1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// asNobody runs sh -c script as uid and gid nobodyID.
func asNobody(t *testing.T, script string) {
	t.Helper()
	asNobodyCred(t, script, nobodyID)
}

func asNobodyCred(t *testing.T, script string, id uint32) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: id, Gid: id}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as %d: %s: %v\n%s", id, script, err, out)
	}
}

// newSharedMount mounts a cache with allow_other through b, reachable
// by nobodyID, and returns it with a directory anyone may write in.
func newSharedMount(t *testing.T, b backend, opt func(*Options)) (*testMount, string) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to write as another user")
	}
	m := newMountWith(t, func(fsys *fsnode.FS, mp string, o Options) (testServer, error) {
		o.AllowOther = true
		if opt != nil {
			opt(&o)
		}
		return b.mount(fsys, mp, o)
	})
	// t.TempDir's directories are private; the mount point's parent
	// must let nobody through.
	if err := os.Chmod(filepath.Dir(m.mp), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := m.path("d")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return m, dir
}

// setidFile creates name with mode (set-id bits included, which create
// and write would strip) owned by root and group nobodyID, and with
// security.capability if withCap.
func setidFile(t *testing.T, name string, mode uint32, withCap bool) {
	t.Helper()
	writeFile(t, name, "0123456789")
	if err := os.Chown(name, 0, nobodyID); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
	if withCap {
		if err := unix.Setxattr(name, "security.capability", capValue, 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := stat(t, name).Mode & 0o7777; got != mode {
		t.Fatalf("%s: mode %o, want %o", name, got, mode)
	}
}

// hasCap reports whether name has security.capability.
func hasCap(t *testing.T, name string) bool {
	t.Helper()
	_, err := unix.Getxattr(name, "security.capability", make([]byte, 64))
	switch err {
	case nil:
		return true
	case unix.ENODATA:
		return false
	}
	t.Fatalf("getxattr %s: %v", name, err)
	return false
}

// TestKillPriv checks, on every backend, that writing, truncating
// (truncate(2) and open with O_TRUNC) and chown clear set-id bits and
// security.capability as a local file system does: for a writer without
// CAP_FSETID suid always and sgid with group execute (the files' group
// is the writer's, so that the kernel's own rule for a writer outside
// the group does not apply); root keeps them when writing or
// truncating; chown clears them for anyone; fallocate(2) clears them in
// every mode, as the kernel does by itself without the capability. The go-fuse adapter does it
// itself (FUSE_HANDLE_KILLPRIV_V2), cgofuse leaves it to the kernel.
// Whether root's write drops security.capability is left to the kernel
// (it does on the first write after the file's attributes were fetched)
// and not checked.
func TestKillPriv(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			_, dir := newSharedMount(t, b, nil)
			p := func(name string) string { return filepath.Join(dir, name) }
			cases := []struct {
				name   string
				mode   uint32 // before
				script string // as nobody, F the file; or
				root   func(name string) error
				want   uint32
				falloc bool // needs fallocate
				noCap  bool // a file without security.capability
			}{
				{name: "write", mode: 0o6777, script: "printf x >> F", want: 0o0777},
				// Without a capability nothing else refreshes the
				// kernel's attributes: the daemon's clearing must.
				{name: "write-nocap", mode: 0o6777, script: "printf x >> F", want: 0o0777, noCap: true},
				{name: "pwrite-nocap", mode: 0o4777, script: "printf x 1<> F", want: 0o0777, noCap: true},
				{name: "write-sgid-noexec", mode: 0o6767, script: "printf x >> F", want: 0o2767},
				{name: "pwrite", mode: 0o4777, script: "printf x 1<> F", want: 0o0777},
				{name: "truncate", mode: 0o6777, script: "truncate -s 3 F", want: 0o0777},
				{name: "otrunc", mode: 0o6777, script: ": > F", want: 0o0777},
				{name: "fallocate", mode: 0o6777, script: "fallocate -l 100 F", want: 0o0777, falloc: true},
				{name: "fallocate-keepsize", mode: 0o6777, script: "fallocate -n -l 100 F", want: 0o0777, falloc: true},
				{name: "chgrp", mode: 0o6777, root: func(n string) error { return os.Chown(n, 0, 0) }, want: 0o0777},
				{name: "root-write", mode: 0o6777, root: func(n string) error {
					f, err := os.OpenFile(n, os.O_WRONLY|os.O_APPEND, 0)
					if err != nil {
						return err
					}
					_, err = f.WriteString("x")
					if cerr := f.Close(); err == nil {
						err = cerr
					}
					return err
				}, want: 0o6777},
				{name: "root-truncate", mode: 0o6777, root: func(n string) error { return os.Truncate(n, 2) }, want: 0o6777},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if c.falloc && b.lacks.NoFallocate {
						t.Skip("no fallocate")
					}
					name := p(c.name)
					setidFile(t, name, c.mode, c.root == nil && !c.noCap)
					if c.root != nil {
						if err := c.root(name); err != nil {
							t.Fatal(err)
						}
					} else {
						asNobody(t, strings.ReplaceAll(c.script, "F", name))
					}
					if got := statMode(t, name); got != c.want {
						t.Errorf("mode %o, want %o", got, c.want)
					}
					if c.root == nil && hasCap(t, name) {
						t.Errorf("security.capability kept")
					}
				})
			}
		})
	}
}

// statMode is name's mode as stat -c %a and ls -l ask for it: statx of
// the mode alone, which the kernel answers from its cached attributes
// unless they were invalidated (a stat of everything would refetch them
// after any write, whose mtime the kernel knows is stale).
func statMode(t *testing.T, name string) uint32 {
	t.Helper()
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MODE, &st); err != nil {
		t.Fatal(err)
	}
	return uint32(st.Mode) & 0o7777
}

// TestACLModeSeen: setting an access ACL changes the mode (the daemon
// keeps the two in step), and stat shows the new mode at once, as on a
// local file system, though the kernel does not enforce ACLs on the mount
// and caches the mode for an hour; removing it leaves the mode, as ext4
// does.
func TestACLModeSeen(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			m := newMountWith(t, b.mount)
			name := m.path("f")
			writeFile(t, name, "x")
			if err := syscall.Chmod(name, 0o600); err != nil {
				t.Fatal(err)
			}
			if got := statMode(t, name); got != 0o600 {
				t.Fatalf("mode %o before the ACL", got)
			}
			// user::rw- user:1000:rw- group::--- mask::rw- other::---
			entry := func(tag, perm uint16, id uint32) []byte {
				return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, tag), perm), id)
			}
			acl := binary.LittleEndian.AppendUint32(nil, 2)
			for _, e := range [][]byte{entry(0x01, 6, ^uint32(0)), entry(0x02, 6, 1000), entry(0x04, 0, ^uint32(0)), entry(0x10, 6, ^uint32(0)), entry(0x20, 0, ^uint32(0))} {
				acl = append(acl, e...)
			}
			if err := unix.Setxattr(name, "system.posix_acl_access", acl, 0); err != nil {
				t.Fatal(err)
			}
			if got := statMode(t, name); got != 0o660 {
				t.Errorf("mode %o after the ACL, want 660 (the mask as group bits)", got)
			}
			if err := unix.Removexattr(name, "system.posix_acl_access"); err != nil {
				t.Fatal(err)
			}
			if got := statMode(t, name); got != 0o660 {
				t.Errorf("mode %o after the ACL's removal, want 660 (as ext4)", got)
			}
		})
	}
}

// debugLog collects go-fuse's debug output (Options.Debug) while a test
// runs.
type debugLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *debugLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *debugLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// captureDebug sends the standard logger, which go-fuse's debug output
// goes to, into a debugLog until the test ends.
func captureDebug(t *testing.T) *debugLog {
	l := &debugLog{}
	w, flags := log.Writer(), log.Flags()
	log.SetOutput(l)
	t.Cleanup(func() { log.SetOutput(w); log.SetFlags(flags) })
	return l
}

// TestWriteNoCapabilityCheck counts the GETXATTR("security.capability")
// requests that small writes to an open file cost, as root and as
// another user: none once the first write has found the file without
// privileges to clear (FUSE_HANDLE_KILLPRIV_V2; before it, one per
// write).
func TestWriteNoCapabilityCheck(t *testing.T) {
	const n = 100
	l := captureDebug(t)
	_, dir := newSharedMount(t, backends[0], func(o *Options) { o.Debug = true })
	count := func() int {
		return strings.Count(l.String(), `GETXATTR`)
	}
	name := filepath.Join(dir, "root")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("0123456789"); err != nil {
		t.Fatal(err)
	}
	before := count()
	for range n {
		if _, err := f.WriteString("0123456789"); err != nil {
			t.Fatal(err)
		}
	}
	if got := count() - before; got != 0 {
		t.Errorf("%d writes as root: %d GETXATTR requests, want none", n, got)
	}
	if !strings.Contains(l.String(), "WRITE") {
		t.Fatalf("no WRITE in go-fuse's debug output: is it captured?")
	}

	other := filepath.Join(dir, "nobody")
	asNobody(t, "printf 0123456789 > "+other)
	before = count()
	asNobody(t, fmt.Sprintf(`exec 3>>%s; printf 0123456789 >&3; i=0; while [ $i -lt %d ]; do printf 0123456789 >&3; i=$((i+1)); done`, other, n))
	// The first write after the open may ask once.
	if got := count() - before; got > 1 {
		t.Errorf("%d writes as nobody: %d GETXATTR requests, want at most 1", n+1, got)
	}
	if st := stat(t, other); st.Size != 10*(n+2) {
		t.Errorf("size %d, want %d", st.Size, 10*(n+2))
	}
}
