//go:build linux

package posixtest

// Cases for the file types and calls Linux tools use beyond files,
// directories and symlinks: FIFOs, Unix sockets, device nodes,
// fallocate(2) and extended attributes. They use the kernel's own calls
// (a pipe through a FIFO, a socket bound in the tree), so they run only
// on an FS with host paths (Native: OS's); elsewhere they skip.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Native is an FS whose files have host paths.
type Native interface {
	// Path returns the host path of name.
	Path(name string) string
}

// Fallocator is a File that offers fallocate(2) (mode, offset, length):
// those of OS, and fsnode's path adapter.
type Fallocator interface {
	Fallocate(mode uint32, off, length int64) error
}

func (f osFile) Fallocate(mode uint32, off, length int64) error {
	return unix.Fallocate(int(f.File.Fd()), mode, off, length)
}

// OSOptions say what a mount under test lacks by design, so the cases
// expect that instead.
type OSOptions struct {
	// NoFallocate: fallocate(2) fails with EOPNOTSUPP in every mode (a
	// FUSE server without FALLOCATE).
	NoFallocate bool
	// NoZeroRange: FALLOC_FL_ZERO_RANGE fails with EOPNOTSUPP (tmpfs).
	NoZeroRange bool
}

// OSWith is OS for a file system lacking what o says.
func OSWith(root string, o OSOptions) FS { return osOptFS{osFS(root), o} }

type osOptFS struct {
	osFS
	o OSOptions
}

func (r osFS) Path(name string) string { return r.p(name) }

func options(fsys FS) OSOptions {
	if o, ok := fsys.(osOptFS); ok {
		return o.o
	}
	if w, ok := fsys.(interface{ unwrap() FS }); ok {
		return options(w.unwrap())
	}
	return OSOptions{}
}

func native(t *testing.T, fsys FS) Native {
	n, ok := fsys.(Native)
	if !ok {
		t.Skip("needs host paths (posixtest.Native)")
	}
	return n
}

func specialTests() map[string]func(t *testing.T, fsys FS) {
	return map[string]func(t *testing.T, fsys FS){
		"FIFO":       testFIFO,
		"UnixSocket": testUnixSocket,
		"DeviceNode": testDeviceNode,
		"MknodFile":  testMknodFile,
		"Fallocate":  testFallocate,
		"Xattrs":     testXattrs,
		"XattrTypes": testXattrTypes,
		"ACLXattrs":  testACLXattrs,
	}
}

func testFIFO(t *testing.T, fsys FS) {
	n := native(t, fsys)
	p := n.Path("fifo")
	ok(t, unix.Mkfifo(p, 0o640), "mkfifo")
	st := lstat(t, fsys, "fifo")
	if st.Mode != syscall.S_IFIFO|0o640&^currentUmask() || st.Size != 0 || st.Nlink != 1 {
		t.Fatalf("fifo: mode %#o size %d nlink %d", st.Mode, st.Size, st.Nlink)
	}
	wantErr(t, unix.Mkfifo(p, 0o640), syscall.EEXIST, "mkfifo over an existing name")
	// A writer and a reader through it, each opening blocks until the
	// other does.
	msg := bytes.Repeat([]byte("through the fifo\n"), 1000) // more than a pipe buffer's page
	errc := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			errc <- err
			return
		}
		_, err = w.Write(msg)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		errc <- err
	}()
	r, err := os.Open(p)
	ok(t, err, "open the fifo for reading")
	got, err := io.ReadAll(r)
	r.Close()
	ok(t, err, "read the fifo")
	ok(t, <-errc, "write the fifo")
	if !bytes.Equal(got, msg) {
		t.Fatalf("read %d bytes through the fifo, want %d", len(got), len(msg))
	}
	// Nothing was stored: the pipe was the kernel's.
	if st := lstat(t, fsys, "fifo"); st.Size != 0 {
		t.Fatalf("fifo size %d after use", st.Size)
	}
	// A non-blocking writer without a reader: ENXIO.
	_, err = os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	wantErr(t, err, syscall.ENXIO, "non-blocking open for writing without a reader")
	// Names work as for any file.
	ok(t, fsys.Link("fifo", "fifo2"), "link")
	ok(t, fsys.Rename("fifo2", "fifo3", 0), "rename")
	if st := lstat(t, fsys, "fifo3"); typ(st.Mode) != syscall.S_IFIFO || st.Nlink != 2 {
		t.Fatalf("renamed link: mode %#o nlink %d", st.Mode, st.Nlink)
	}
	ok(t, fsys.Chmod("fifo3", 0o600), "chmod")
	if st := lstat(t, fsys, "fifo"); st.Mode != syscall.S_IFIFO|0o600 {
		t.Fatalf("after chmod: mode %#o", st.Mode)
	}
	wantErr(t, fsys.Truncate("fifo", 0), syscall.EINVAL, "truncate of a fifo")
	ok(t, fsys.Unlink("fifo"), "unlink")
	ok(t, fsys.Unlink("fifo3"), "unlink")
}

// shortPath returns a path naming name in dir that fits a socket address
// (108 bytes): through /proc/self/fd and an O_PATH descriptor of dir.
func shortPath(t *testing.T, dir, name string) string {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	ok(t, err, "open "+dir)
	t.Cleanup(func() { unix.Close(fd) })
	return fmt.Sprintf("/proc/self/fd/%d/%s", fd, name)
}

func testUnixSocket(t *testing.T, fsys FS) {
	n := native(t, fsys)
	addr := shortPath(t, n.Path(""), "sock")
	l, err := net.Listen("unix", addr)
	ok(t, err, "bind a socket")
	defer l.Close()
	st := lstat(t, fsys, "sock")
	if typ(st.Mode) != syscall.S_IFSOCK || st.Size != 0 {
		t.Fatalf("socket: mode %#o size %d", st.Mode, st.Size)
	}
	done := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err != nil {
			done <- err
			return
		}
		_, err = c.Write(append(buf, " back"...))
		done <- err
	}()
	c, err := net.Dial("unix", addr)
	ok(t, err, "connect")
	defer c.Close()
	_, err = c.Write([]byte("hello"))
	ok(t, err, "send")
	got := make([]byte, 10)
	_, err = io.ReadFull(c, got)
	ok(t, err, "receive")
	ok(t, <-done, "server side")
	if string(got) != "hello back" {
		t.Fatalf("received %q", got)
	}
	// Opening a socket as a file: ENXIO.
	_, err = os.Open(n.Path("sock"))
	wantErr(t, err, syscall.ENXIO, "open of a socket")
	// A second bind to the name: EADDRINUSE.
	_, err = net.Listen("unix", addr)
	wantErr(t, err, syscall.EADDRINUSE, "bind over an existing socket")
}

func testDeviceNode(t *testing.T, fsys FS) {
	n := native(t, fsys)
	p := n.Path("null")
	dev := unix.Mkdev(1, 3)
	if os.Geteuid() != 0 {
		wantErr(t, unix.Mknod(p, syscall.S_IFCHR|0o666, int(dev)), syscall.EPERM, "mknod of a device without CAP_MKNOD")
		t.Skip("device nodes need root")
	}
	ok(t, unix.Mknod(p, syscall.S_IFCHR|0o666, int(dev)), "mknod c 1 3")
	ok(t, unix.Mknod(n.Path("blk"), syscall.S_IFBLK|0o600, int(unix.Mkdev(7, 200))), "mknod b 7 200")
	var st unix.Stat_t
	ok(t, unix.Lstat(p, &st), "stat")
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != dev || st.Size != 0 {
		t.Fatalf("char device: mode %#o rdev %#x size %d, want rdev %#x", st.Mode, st.Rdev, st.Size, dev)
	}
	ok(t, unix.Lstat(n.Path("blk"), &st), "stat")
	if st.Mode != syscall.S_IFBLK|0o600 || st.Rdev != unix.Mkdev(7, 200) {
		t.Fatalf("block device: mode %#o rdev %#x", st.Mode, st.Rdev)
	}
	// Opened, it is /dev/null: writes vanish, reads find nothing.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	ok(t, err, "open the device")
	defer f.Close()
	if k, err := f.Write([]byte("gone")); k != 4 || err != nil {
		t.Fatalf("write to the device: %d, %v", k, err)
	}
	if b, err := io.ReadAll(f); len(b) != 0 || err != nil {
		t.Fatalf("read from the device: %q, %v", b, err)
	}
	if st := lstat(t, fsys, "null"); st.Size != 0 {
		t.Fatalf("device size %d after writing", st.Size)
	}
	ok(t, fsys.Rename("null", "null2", 0), "rename")
	ok(t, unix.Lstat(n.Path("null2"), &st), "stat")
	if st.Rdev != dev {
		t.Fatalf("renamed device: rdev %#x", st.Rdev)
	}
}

// testMknodFile: mknod(2) of a regular file (S_IFREG, or no type).
func testMknodFile(t *testing.T, fsys FS) {
	n := native(t, fsys)
	ok(t, unix.Mknod(n.Path("f"), syscall.S_IFREG|0o600, 0), "mknod S_IFREG")
	ok(t, unix.Mknod(n.Path("g"), 0o600, 0), "mknod without a type")
	for _, name := range []string{"f", "g"} {
		if st := lstat(t, fsys, name); st.Mode != syscall.S_IFREG|0o600 || st.Size != 0 {
			t.Fatalf("%s: mode %#o size %d", name, st.Mode, st.Size)
		}
	}
	writeFile(t, fsys, "f", []byte("data"))
	wantContent(t, fsys, "f", []byte("data"))
	wantErr(t, unix.Mknod(n.Path("d"), syscall.S_IFDIR|0o755, 0), syscall.EPERM, "mknod of a directory")
}

func testFallocate(t *testing.T, fsys FS) {
	n := native(t, fsys)
	data := randBytes(7, 10000)
	writeFile(t, fsys, "f", data)
	f, err := os.OpenFile(n.Path("f"), os.O_RDWR, 0)
	ok(t, err, "open")
	defer f.Close()
	fd := int(f.Fd())
	if options(fsys).NoFallocate {
		for _, mode := range []uint32{0, unix.FALLOC_FL_KEEP_SIZE, unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE, unix.FALLOC_FL_ZERO_RANGE} {
			wantErr(t, unix.Fallocate(fd, mode, 0, 100), syscall.EOPNOTSUPP, fmt.Sprintf("fallocate mode %#x", mode))
		}
		wantContent(t, fsys, "f", data)
		return
	}
	want := slices.Clone(data)
	check := func(what string) {
		t.Helper()
		got := make([]byte, len(want)+100)
		k, err := f.ReadAt(got, 0)
		if err != nil && err != io.EOF {
			t.Fatalf("%s: read: %v", what, err)
		}
		if !bytes.Equal(got[:k], want) {
			t.Fatalf("%s: read %d bytes, want %d (first difference at %d)", what, k, len(want), firstDiff(got[:k], want))
		}
		st, err := f.Stat()
		ok(t, err, "fstat")
		if st.Size() != int64(len(want)) {
			t.Fatalf("%s: size %d, want %d", what, st.Size(), len(want))
		}
	}
	// Mode 0: allocated, the size grows, zeros read back.
	ok(t, unix.Fallocate(fd, 0, 8000, 8000), "fallocate mode 0")
	want = append(want, make([]byte, 6000)...)
	check("mode 0")
	// KEEP_SIZE past the end: the size stays.
	ok(t, unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 15000, 10000), "fallocate keep size")
	check("keep size")
	// A punched hole reads as zeros.
	ok(t, unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 100, 5000), "punch hole")
	clear(want[100:5100])
	check("punch hole")
	wantErr(t, unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE, 0, 10), syscall.EOPNOTSUPP, "punch hole without keep size")
	// Zero range: zeros, growing the size unless KEEP_SIZE.
	if options(fsys).NoZeroRange {
		wantErr(t, unix.Fallocate(fd, unix.FALLOC_FL_ZERO_RANGE, 9000, 8000), syscall.EOPNOTSUPP, "zero range")
		ok(t, unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 9000, 8000), "punch instead")
		ok(t, unix.Fallocate(fd, 0, 9000, 8000), "and allocate")
		ok(t, unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 5, 10), "punch instead")
	} else {
		ok(t, unix.Fallocate(fd, unix.FALLOC_FL_ZERO_RANGE, 9000, 8000), "zero range")
		ok(t, unix.Fallocate(fd, unix.FALLOC_FL_ZERO_RANGE|unix.FALLOC_FL_KEEP_SIZE, 5, 10), "zero range keep size")
	}
	clear(want[9000:])
	want = append(want, make([]byte, 1000)...)
	clear(want[5:15])
	check("zero range")
	// Writes into a punched range land as usual.
	_, err = f.WriteAt([]byte("back"), 200)
	ok(t, err, "write into the hole")
	copy(want[200:], "back")
	check("write into the hole")
	// Modes no file system of both kinds offers, and bad arguments.
	wantErr(t, unix.Fallocate(fd, unix.FALLOC_FL_UNSHARE_RANGE, 0, 4096), syscall.EOPNOTSUPP, "unshare range")
	wantErr(t, unix.Fallocate(fd, 0, 0, 0), syscall.EINVAL, "zero length")
	wantErr(t, unix.Fallocate(fd, 0, -1, 10), syscall.EINVAL, "negative offset")
	// A read-only descriptor: EBADF (the kernel's check).
	r, err := os.Open(n.Path("f"))
	ok(t, err, "open read-only")
	defer r.Close()
	wantErr(t, unix.Fallocate(int(r.Fd()), 0, 0, 10), syscall.EBADF, "fallocate read-only")
	ok(t, f.Close(), "close")
	wantContent(t, fsys, "f", want)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// XattrNames lists path's extended attributes (llistxattr), sorted.
func XattrNames(path string) ([]string, error) {
	sz, err := unix.Llistxattr(path, nil)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, sz)
	sz, err = unix.Llistxattr(path, buf)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range strings.Split(string(buf[:sz]), "\x00") {
		if s != "" {
			names = append(names, s)
		}
	}
	slices.Sort(names)
	return names, nil
}

// userNames drops names the host adds by itself (an LSM's
// security.selinux), which a native file system may carry.
func userNames(names []string) []string {
	return slices.DeleteFunc(names, func(s string) bool { return s == "security.selinux" })
}

func testXattrs(t *testing.T, fsys FS) {
	n := native(t, fsys)
	writeFile(t, fsys, "f", []byte("x"))
	p := n.Path("f")
	if names, err := XattrNames(p); err != nil || len(userNames(names)) != 0 {
		t.Fatalf("new file lists %q, %v", names, err)
	}
	_, err := unix.Getxattr(p, "user.a", make([]byte, 10))
	wantErr(t, err, syscall.ENODATA, "get of a missing attribute")
	ok(t, unix.Setxattr(p, "user.a", []byte("value a"), 0), "set user.a")
	ok(t, unix.Setxattr(p, "user.empty", nil, 0), "set an empty value")
	// Size query, exact buffer, small buffer.
	if sz, err := unix.Getxattr(p, "user.a", nil); sz != 7 || err != nil {
		t.Fatalf("size query: %d, %v", sz, err)
	}
	buf := make([]byte, 7)
	if sz, err := unix.Getxattr(p, "user.a", buf); sz != 7 || err != nil || string(buf) != "value a" {
		t.Fatalf("get: %d %q, %v", sz, buf, err)
	}
	_, err = unix.Getxattr(p, "user.a", make([]byte, 3))
	wantErr(t, err, syscall.ERANGE, "get into a small buffer")
	if sz, err := unix.Getxattr(p, "user.empty", make([]byte, 3)); sz != 0 || err != nil {
		t.Fatalf("get of an empty value: %d, %v", sz, err)
	}
	_, err = unix.Listxattr(p, make([]byte, 3))
	wantErr(t, err, syscall.ERANGE, "list into a small buffer")
	// Flags.
	wantErr(t, unix.Setxattr(p, "user.a", []byte("b"), unix.XATTR_CREATE), syscall.EEXIST, "XATTR_CREATE of an existing name")
	wantErr(t, unix.Setxattr(p, "user.b", []byte("b"), unix.XATTR_REPLACE), syscall.ENODATA, "XATTR_REPLACE of a missing name")
	ok(t, unix.Setxattr(p, "user.b", []byte("b"), unix.XATTR_CREATE), "XATTR_CREATE")
	ok(t, unix.Setxattr(p, "user.a", []byte("replaced"), unix.XATTR_REPLACE), "XATTR_REPLACE")
	// Bounds: a 64 KiB value is the most; a longer name than 255 is ERANGE.
	big := randBytes(3, 64<<10)
	if err := unix.Setxattr(p, "user.big", big, 0); err != nil && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.E2BIG) {
		t.Fatalf("set a 64 KiB value: %v", err) // ext4 without ea_inode holds one block
	} else if err == nil {
		got := make([]byte, len(big))
		sz, err := unix.Getxattr(p, "user.big", got)
		if err != nil || !bytes.Equal(got[:sz], big) {
			t.Fatalf("64 KiB value read back: %d, %v", sz, err)
		}
		ok(t, unix.Removexattr(p, "user.big"), "remove user.big")
	}
	wantErr(t, unix.Setxattr(p, "user."+strings.Repeat("n", 251), nil, 0), syscall.ERANGE, "a 256-byte name")
	wantErr(t, unix.Setxattr(p, "user.huge", make([]byte, 64<<10+1), 0), syscall.E2BIG, "a value over 64 KiB")
	if names, err := XattrNames(p); err != nil || !slices.Equal(userNames(names), []string{"user.a", "user.b", "user.empty"}) {
		t.Fatalf("list: %q, %v", names, err)
	}
	// Remove.
	ok(t, unix.Removexattr(p, "user.b"), "remove")
	wantErr(t, unix.Removexattr(p, "user.b"), syscall.ENODATA, "remove of a missing attribute")
	// Kept by link and rename.
	ok(t, fsys.Link("f", "l"), "link")
	ok(t, fsys.Rename("f", "g", 0), "rename")
	got := make([]byte, 20)
	sz, err := unix.Getxattr(n.Path("l"), "user.a", got)
	if err != nil || string(got[:sz]) != "replaced" {
		t.Fatalf("through the link: %q, %v", got[:sz], err)
	}
	// Directories hold them; trusted. and security. names for root.
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	ok(t, unix.Setxattr(n.Path("d"), "user.dir", []byte("d"), 0), "set on a directory")
	if os.Geteuid() == 0 {
		ok(t, unix.Setxattr(n.Path("g"), "trusted.t", []byte{0, 1, 2}, 0), "set trusted.t")
		ok(t, unix.Setxattr(n.Path("g"), "security.hgfs", []byte("s"), 0), "set security.hgfs")
		if names, err := XattrNames(n.Path("g")); err != nil || !slices.Equal(userNames(names), []string{"security.hgfs", "trusted.t", "user.a", "user.empty"}) {
			t.Fatalf("list: %q, %v", names, err)
		}
	}
	// An unknown namespace.
	wantErr(t, unix.Setxattr(n.Path("g"), "hgfs.x", nil, 0), syscall.EOPNOTSUPP, "an unknown namespace")
}

// testXattrTypes: user. attributes only on files and directories (the
// kernel's rule), any type for trusted. as root.
func testXattrTypes(t *testing.T, fsys FS) {
	n := native(t, fsys)
	ok(t, fsys.Symlink("target", "s"), "symlink")
	ok(t, unix.Mkfifo(n.Path("p"), 0o644), "mkfifo")
	for _, name := range []string{"s", "p"} {
		err := unix.Lsetxattr(n.Path(name), "user.x", []byte("v"), 0)
		wantErr(t, err, syscall.EPERM, "user. attribute on "+name)
		_, err = unix.Lgetxattr(n.Path(name), "user.x", nil)
		wantErr(t, err, syscall.ENODATA, "get of a user. attribute on "+name)
		if os.Geteuid() == 0 {
			ok(t, unix.Lsetxattr(n.Path(name), "trusted.x", []byte("v"), 0), "trusted. attribute on "+name)
			if names, err := XattrNames(n.Path(name)); err != nil || !slices.Contains(names, "trusted.x") {
				t.Fatalf("%s lists %q, %v", name, names, err)
			}
		}
	}
}

// aclBlob is a system.posix_acl_access value: version 2, then entries
// of tag, permissions and id (little-endian), here u::rw-, u:1000:r--,
// g::r--, m::r--, o::r--.
func aclBlob() []byte {
	b := []byte{2, 0, 0, 0}
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{1, 6, ^uint32(0)}, {2, 4, 1000}, {4, 4, ^uint32(0)}, {0x10, 4, ^uint32(0)}, {0x20, 4, ^uint32(0)}} {
		b = append(b, byte(e.tag), byte(e.tag>>8), byte(e.perm), byte(e.perm>>8),
			byte(e.id), byte(e.id>>8), byte(e.id>>16), byte(e.id>>24))
	}
	return b
}

// testACLXattrs: an access ACL set as the raw xattr (what setfacl, cp -a
// and rsync -X do) reads back the same.
func testACLXattrs(t *testing.T, fsys FS) {
	n := native(t, fsys)
	writeFile(t, fsys, "f", []byte("x"))
	p := n.Path("f")
	acl := aclBlob()
	ok(t, unix.Setxattr(p, "system.posix_acl_access", acl, 0), "set an access ACL")
	got := make([]byte, 100)
	sz, err := unix.Getxattr(p, "system.posix_acl_access", got)
	ok(t, err, "get the access ACL")
	if !bytes.Equal(got[:sz], acl) {
		t.Fatalf("ACL read back %x, want %x", got[:sz], acl)
	}
	ok(t, fsys.Mkdir("d", 0o755), "mkdir")
	ok(t, unix.Setxattr(n.Path("d"), "system.posix_acl_default", acl, 0), "set a default ACL")
	sz, err = unix.Getxattr(n.Path("d"), "system.posix_acl_default", got)
	ok(t, err, "get the default ACL")
	if !bytes.Equal(got[:sz], acl) {
		t.Fatalf("default ACL read back %x, want %x", got[:sz], acl)
	}
	names, err := XattrNames(p)
	ok(t, err, "list")
	if !slices.Contains(names, "system.posix_acl_access") {
		t.Fatalf("list %q lacks the ACL", names)
	}
	if st := lstat(t, fsys, "f"); st.Mode&0o777 != 0o644 {
		t.Fatalf("mode %#o after setting u::rw-,u:1000:r--,g::r--,m::r--,o::r--, want 0644", st.Mode&0o777)
	}
	// chmod rewrites the ACL's owner, mask and other entries.
	ok(t, fsys.Chmod("f", 0o705), "chmod")
	sz, err = unix.Getxattr(p, "system.posix_acl_access", got)
	ok(t, err, "get the access ACL")
	want := aclBlob()
	want[4+2], want[4+8*3+2], want[4+8*4+2] = 7, 0, 5
	if !bytes.Equal(got[:sz], want) {
		t.Fatalf("ACL after chmod %x, want %x", got[:sz], want)
	}
	ok(t, unix.Removexattr(p, "system.posix_acl_access"), "remove the ACL")
	// What cp -a does: create with 0600, then set the mode as an ACL of
	// owner, group and other entries only. That ACL is the mode.
	f, err := fsys.OpenFile("g", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	ok(t, err, "create")
	f.Close()
	minimal := append(append(aclBlob()[:12], aclBlob()[20:28]...), aclBlob()[36:]...)
	minimal[4+2], minimal[4+8+2], minimal[4+16+2] = 7, 5, 1
	ok(t, unix.Setxattr(n.Path("g"), "system.posix_acl_access", minimal, 0), "set a minimal ACL")
	if st := lstat(t, fsys, "g"); st.Mode&0o777 != 0o751 {
		t.Fatalf("mode %#o after a minimal ACL u::rwx,g::r-x,o::--x, want 0751", st.Mode&0o777)
	}
	_, err = unix.Getxattr(n.Path("g"), "system.posix_acl_access", got)
	wantErr(t, err, syscall.ENODATA, "get of a minimal ACL (the mode)")
}
