//go:build linux

package main

// The floor under writing a store into a directory: a child (this
// binary, createFloorFlag) reads the store's tarball into memory, makes
// its directories, then creates every file from memory on a number of
// goroutines (one open, one write, one close each, in the tarball's
// order, as the stream sink's writers take them), with nothing to
// decode and no checks. No writer of a store does less: a stream clone
// or a bundle applied into a directory can approach this time but not
// pass it, and where this is above a goal against `tar -x`, that goal is
// out of any writer's reach on the machine. Reading the tarball (from
// the page cache) is inside the time.

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

const createFloorFlag = "-child-create-floor"

// createFloorWriters is the child's goroutine count: the stream sink's
// (streamclone.DefaultDirOptions' Writers).
const createFloorWriters = 4

// createFloorName names the floor in the table.
var createFloorName = fmt.Sprintf("creating the tarball's files from memory on %d goroutines", createFloorWriters)

func init() {
	if len(os.Args) > 1 && os.Args[1] == createFloorFlag {
		os.Exit(runCreateFloor(os.Args[2:]))
	}
}

// createFloorCmd is the child creating tarball's files under dest, which
// must not exist.
func createFloorCmd(env *Env, tarball, dest string) *exec.Cmd {
	return exec.Command(env.Self, createFloorFlag, tarball, dest, strconv.Itoa(createFloorWriters))
}

type floorFile struct {
	name string
	mode uint32
	data []byte
}

func runCreateFloor(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: bench "+createFloorFlag+" TARBALL DEST WRITERS")
		return 2
	}
	writers, err := strconv.Atoi(args[2])
	if err != nil || writers < 1 {
		fmt.Fprintf(os.Stderr, "bench: %s: writers %q\n", createFloorFlag, args[2])
		return 2
	}
	dirs, files, err := readTarball(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", createFloorFlag, err)
		return 1
	}
	dest := args[1]
	if err := os.Mkdir(dest, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", createFloorFlag, err)
		return 1
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dest, d), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", createFloorFlag, err)
			return 1
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				if err := createFile(filepath.Join(dest, files[i].name), files[i].mode, files[i].data); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		fmt.Fprintf(os.Stderr, "bench: %s: %v\n", createFloorFlag, first)
		return 1
	}
	return 0
}

// readTarball returns a tarball's directories and regular files, in its
// order.
func readTarball(p string) (dirs []string, files []floorFile, err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dirs, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		name := filepath.Clean(h.Name)
		if name == "." || strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			dirs = append(dirs, name)
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, nil, err
			}
			files = append(files, floorFile{name: name, mode: uint32(h.Mode) & 0o777, data: data})
		case tar.TypeLink:
			// A hard link (hg's undo.dirstate): an empty file of its own
			// costs the floor what the link costs tar.
			files = append(files, floorFile{name: name, mode: uint32(h.Mode) & 0o777})
		}
	}
}

// createFile creates p with mode and data: open, write, close.
func createFile(p string, mode uint32, data []byte) error {
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, mode)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err != nil {
			unix.Close(fd)
			return &os.PathError{Op: "write", Path: p, Err: err}
		}
		data = data[n:]
	}
	return unix.Close(fd)
}
