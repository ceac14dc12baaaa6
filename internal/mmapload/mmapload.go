//go:build linux

// Package mmapload is the memory-mapped I/O workload that hgfs's mount
// tests and `make bench` run on a mount and on a native file system:
// reading a file through a shared mapping (in order and at random
// pages), writing through one with msync, and an fsx-like random mix of
// read(2), write(2), mapped reads and writes, truncations and reopenings
// checked against a model of the file.
//
// A process must never touch a mapping of a FUSE file it serves itself:
// a page fault blocks its thread outside any system call the Go runtime
// knows of, and a garbage collection that starts then waits for that
// thread while the fault waits for the server. Tests and the bench
// therefore run these functions in a child process (Main).
package mmapload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Page is the unit the workloads map, read and write.
const Page = 4096

// Pattern is the byte Fill writes at offset off: it differs from page
// to page and within a page, so a page read from the wrong place shows.
func Pattern(off int64) byte { return byte(off>>12)*31 + byte(off) }

// Fill creates name (truncating it) with size bytes of Pattern, written
// with write(2) in 1 MiB pieces, and fsyncs it.
func Fill(name string, size int64) error {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-off)
		for i := range buf[:n] {
			buf[i] = Pattern(off + int64(i))
		}
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Drop asks the kernel to drop name's clean cached pages
// (posix_fadvise POSIX_FADV_DONTNEED), so that the next reads fetch them
// again: from the disk, or through a FUSE mount from its server. tmpfs
// keeps its pages.
func Drop(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise %s: %w", name, err)
	}
	return nil
}

// mapFile maps the whole of name, shared, read-only or read-write.
func mapFile(name string, write bool) ([]byte, func() error, error) {
	flag, prot := os.O_RDONLY, syscall.PROT_READ
	if write {
		flag, prot = os.O_RDWR, syscall.PROT_READ|syscall.PROT_WRITE
	}
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if fi.Size() == 0 {
		f.Close()
		return nil, nil, fmt.Errorf("%s: empty", name)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), prot, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("mmap %s: %w", name, err)
	}
	return m, func() error {
		return errors.Join(unix.Munmap(m), f.Close())
	}, nil
}

// msync writes a mapping back and waits (MS_SYNC), again when
// interrupted: a FUSE server may answer the FSYNC the kernel sends EINTR
// when a signal (the Go runtime's preemption, for one) reaches the
// caller, as os.File.Sync retries fsync.
func msync(m []byte) error {
	for {
		err := unix.Msync(m, unix.MS_SYNC)
		if err != syscall.EINTR {
			return err
		}
	}
}

// checkPage compares the page at off of a mapping with Pattern, given
// the offsets that were changed since Fill (nil: none).
func checkPage(name string, page []byte, off int64, changed map[int64]byte) error {
	for i, b := range page {
		want, ok := changed[off+int64(i)]
		if !ok {
			want = Pattern(off + int64(i))
		}
		if b != want {
			return fmt.Errorf("%s: byte %d reads %#x through the mapping, want %#x", name, off+int64(i), b, want)
		}
	}
	return nil
}

// SeqRead maps the whole of name (as Fill left it) and copies every page
// out of the mapping in order, checking the first and last of each.
func SeqRead(name string) error {
	m, done, err := mapFile(name, false)
	if err != nil {
		return err
	}
	var buf [Page]byte
	for off := 0; off < len(m); off += Page {
		n := copy(buf[:], m[off:])
		if buf[0] != Pattern(int64(off)) || buf[n-1] != Pattern(int64(off+n-1)) {
			done()
			return checkPage(name, buf[:n], int64(off), nil)
		}
	}
	return done()
}

// RandRead maps the whole of name (as Fill left it) and copies n pages
// chosen at random out of the mapping, checking each.
func RandRead(name string, n int, seed int64) error {
	m, done, err := mapFile(name, false)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewSource(seed))
	pages := (len(m) + Page - 1) / Page
	var buf [Page]byte
	for range n {
		off := r.Intn(pages) * Page
		k := copy(buf[:], m[off:])
		if err := checkPage(name, buf[:k], int64(off), nil); err != nil {
			done()
			return err
		}
	}
	return done()
}

// WriteSync maps the whole of name (as Fill left it) read-write, stores
// one byte in each of n pages chosen at random and msyncs (MS_SYNC)
// after every `every` stores and at the end. The bytes it stored are
// returned, by offset (Check takes them).
func WriteSync(name string, n, every int, seed int64) (map[int64]byte, error) {
	m, done, err := mapFile(name, true)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewSource(seed))
	pages := (len(m) + Page - 1) / Page
	changed := map[int64]byte{}
	for i := range n {
		off := int64(r.Intn(pages)*Page + r.Intn(Page))
		if off >= int64(len(m)) {
			off = int64(len(m)) - 1
		}
		b := ^Pattern(off) ^ byte(i)
		m[off] = b
		changed[off] = b
		if every > 0 && (i+1)%every == 0 {
			if err := msync(m); err != nil {
				done()
				return nil, fmt.Errorf("msync %s: %w", name, err)
			}
		}
	}
	if err := msync(m); err != nil {
		done()
		return nil, fmt.Errorf("msync %s: %w", name, err)
	}
	return changed, done()
}

// Check reads name with read(2) and compares it with Pattern, but for
// the bytes in changed, over size bytes.
func Check(name string, size int64, changed map[int64]byte) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if int64(len(data)) != size {
		return fmt.Errorf("%s: %d bytes, want %d", name, len(data), size)
	}
	for off := int64(0); off < size; off += Page {
		page := data[off:min(off+Page, size)]
		if err := checkPage(name, page, off, changed); err != nil {
			return fmt.Errorf("read(2): %w", err)
		}
	}
	return nil
}

// FsxMaxLen and fsxMaxOp are fsx's defaults: a file of up to 256 KiB,
// each operation up to 64 KiB.
const (
	FsxMaxLen = 256 << 10
	fsxMaxOp  = 64 << 10
)

// Fsx runs ops operations of fsx's kinds at random on name (created
// empty): read(2), write(2), a read through a shared mapping, a write
// through one followed by msync without MS_SYNC (as fsx does: the dirty
// pages are written back when the kernel chooses, at the latest when the
// mapping goes), growing the file with ftruncate first as fsx does,
// ftruncate, and close and reopen. Every read, mapped or
// not, is checked against a model of the file, and the whole file is
// checked at the end.
func Fsx(name string, ops int, seed int64) error {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	r := rand.New(rand.NewSource(seed))
	var model []byte
	buf := make([]byte, fsxMaxOp)
	grow := func(size int) {
		if size > len(model) {
			model = append(model, make([]byte, size-len(model))...)
		}
	}
	for i := range ops {
		off, n := r.Intn(FsxMaxLen), r.Intn(fsxMaxOp)+1
		n = min(n, FsxMaxLen-off)
		fail := func(format string, args ...any) error {
			return fmt.Errorf("fsx %s, operation %d: %s", name, i, fmt.Sprintf(format, args...))
		}
		switch op := r.Intn(6); op {
		case 0, 2: // read(2), mapped read
			if len(model) == 0 {
				continue
			}
			off %= len(model)
			n = min(n, len(model)-off)
			if op == 0 {
				if k, err := f.ReadAt(buf[:n], int64(off)); k != n {
					return fail("read %d bytes at %d: %d, %v", n, off, k, err)
				}
			} else {
				start := off &^ (Page - 1)
				m, err := unix.Mmap(int(f.Fd()), int64(start), off+n-start, unix.PROT_READ, unix.MAP_SHARED)
				if err != nil {
					return fail("mmap: %v", err)
				}
				copy(buf, m[off-start:])
				if err := unix.Munmap(m); err != nil {
					return fail("munmap: %v", err)
				}
			}
			if !bytes.Equal(buf[:n], model[off:off+n]) {
				return fail("%d bytes at %d differ from what was written (mapped: %v)", n, off, op == 2)
			}
		case 1: // write(2)
			r.Read(buf[:n])
			if _, err := f.WriteAt(buf[:n], int64(off)); err != nil {
				return fail("write: %v", err)
			}
			grow(off + n)
			copy(model[off:], buf[:n])
		case 3: // mapped write and msync
			if off+n > len(model) {
				if err := f.Truncate(int64(off + n)); err != nil {
					return fail("truncate: %v", err)
				}
				grow(off + n)
			}
			start := off &^ (Page - 1)
			m, err := unix.Mmap(int(f.Fd()), int64(start), off+n-start, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				return fail("mmap: %v", err)
			}
			r.Read(buf[:n])
			copy(m[off-start:], buf[:n])
			copy(model[off:], buf[:n])
			err = unix.Msync(m, unix.MS_ASYNC)
			if uerr := unix.Munmap(m); err == nil {
				err = uerr
			}
			if err != nil {
				return fail("msync: %v", err)
			}
		case 4: // ftruncate
			size := r.Intn(FsxMaxLen)
			if err := f.Truncate(int64(size)); err != nil {
				return fail("truncate: %v", err)
			}
			grow(size)
			clear(model[size:])
			model = model[:size]
		case 5: // close and reopen
			if err := f.Close(); err != nil {
				return fail("close: %v", err)
			}
			if f, err = os.OpenFile(name, os.O_RDWR, 0); err != nil {
				return fail("reopen: %v", err)
			}
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if !bytes.Equal(data, model) {
		return fmt.Errorf("fsx %s: the file (%d bytes) differs from what was written (%d bytes)", name, len(data), len(model))
	}
	return nil
}

// MapWait maps the whole of name read-only and reads every page, writes
// "ready\n" to out, waits for a line on in, then writes the mapping's
// content to out: what a mapping made before a change by someone else
// shows after it.
func MapWait(name string, in io.Reader, out io.Writer) error {
	m, done, err := mapFile(name, false)
	if err != nil {
		return err
	}
	var sum byte
	for off := 0; off < len(m); off += Page {
		sum += m[off]
	}
	if err := readyWait(in, out); err != nil {
		done()
		return err
	}
	_, err = out.Write(m)
	return errors.Join(err, done())
}

// readyWait writes "ready\n" to out and waits for a line on in: the
// waiting workloads' hand-over to the parent process.
func readyWait(in io.Reader, out io.Writer) error {
	if _, err := io.WriteString(out, "ready\n"); err != nil {
		return err
	}
	_, err := bufio.NewReader(in).ReadString('\n')
	return err
}

// DirtyWait maps the whole of name shared and writable, stores 0xEE at
// each offset of offs (dirtying their pages), writes "ready\n" to out,
// waits for a line on in, then syncs the mapping and unmaps it: pages
// held dirty in the kernel while someone else changes the file.
func DirtyWait(name string, offs []int64, in io.Reader, out io.Writer) error {
	m, done, err := mapFile(name, true)
	if err != nil {
		return err
	}
	for _, off := range offs {
		if off < 0 || off >= int64(len(m)) {
			done()
			return fmt.Errorf("%s: offset %d outside its %d bytes", name, off, len(m))
		}
		m[off] = 0xEE
	}
	if err := readyWait(in, out); err != nil {
		done()
		return err
	}
	return errors.Join(msync(m), done())
}

// Main runs one workload, named by args[0], and prints its wall time in
// seconds; it is the body of the child processes the tests and the
// bench start (see the package comment). The workloads:
//
//	fill FILE BYTES
//	drop FILE
//	seqread FILE
//	randread FILE PAGES SEED
//	writesync FILE STORES EVERY SEED (then the whole file is checked
//	  with read(2), untimed)
//	fsx FILE OPS SEED
//	mapwait FILE (MapWait on standard input and output, before the time)
//	dirtywait FILE OFFSET... (DirtyWait on standard input and output)
//
// It returns the exit code: 0, 1 when the workload failed (the error is
// on stderr), 2 for bad arguments.
func Main(args []string) int {
	ints := func(want int) ([]int64, bool) {
		if len(args) != want+2 {
			return nil, false
		}
		out := make([]int64, want)
		for i := range out {
			v, err := strconv.ParseInt(args[2+i], 10, 64)
			if err != nil {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	}
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "mmapload: usage: WORKLOAD FILE ARGS...")
		return 2
	}
	name := args[1]
	var run func() error
	var changed map[int64]byte // writesync's stores, checked untimed
	switch args[0] {
	case "fill":
		if v, ok := ints(1); ok {
			run = func() error { return Fill(name, v[0]) }
		}
	case "drop":
		if _, ok := ints(0); ok {
			run = func() error { return Drop(name) }
		}
	case "seqread":
		if _, ok := ints(0); ok {
			run = func() error { return SeqRead(name) }
		}
	case "randread":
		if v, ok := ints(2); ok {
			run = func() error { return RandRead(name, int(v[0]), v[1]) }
		}
	case "writesync":
		if v, ok := ints(3); ok {
			run = func() error {
				var err error
				changed, err = WriteSync(name, int(v[0]), int(v[1]), v[2])
				return err
			}
		}
	case "mapwait":
		if _, ok := ints(0); ok {
			run = func() error { return MapWait(name, os.Stdin, os.Stdout) }
		}
	case "dirtywait":
		if v, ok := ints(len(args) - 2); ok && len(v) > 0 {
			run = func() error { return DirtyWait(name, v, os.Stdin, os.Stdout) }
		}
	case "fsx":
		if v, ok := ints(2); ok {
			run = func() error { return Fsx(name, int(v[0]), v[1]) }
		}
	}
	if run == nil {
		fmt.Fprintf(os.Stderr, "mmapload: bad arguments %q\n", args)
		return 2
	}
	start := time.Now()
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "mmapload: %v\n", err)
		return 1
	}
	took := time.Since(start)
	if changed != nil {
		fi, err := os.Stat(name)
		if err == nil {
			err = Check(name, fi.Size(), changed)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "mmapload: after writesync: %v\n", err)
			return 1
		}
	}
	fmt.Printf("%.6f\n", took.Seconds())
	return 0
}
