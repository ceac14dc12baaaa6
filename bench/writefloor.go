package main

// The floor of writing a store's files (issue 26): a child of this
// binary (writeFloorFlag) reads a tarball's files into memory, then
// creates the directories and writes every file on GOMAXPROCS
// goroutines, with nothing else: no stream to decode, no revlog to
// check, no fncache, no lock. The time it takes is what creating those
// files in parallel costs on this machine, the least any applier of a
// stream bundle into a directory can take (tar -x writes them on one
// thread).

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// writeFloorFlag runs the floor: TARBALL DIR.
const writeFloorFlag = "-child-write-files"

func init() {
	if len(os.Args) == 4 && os.Args[1] == writeFloorFlag {
		if err := writeFloor(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "write floor:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func writeFloor(tarball, dir string) error {
	type file struct {
		name string
		perm os.FileMode
		data []byte
	}
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	var files []file
	made := map[string]bool{}
	tr := tar.NewReader(bufio.NewReaderSize(f, 1<<20))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			made[p] = true
		case tar.TypeReg:
			if d := filepath.Dir(p); !made[d] {
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
				made[d] = true
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			files = append(files, file{p, os.FileMode(h.Mode) & os.ModePerm, data})
		}
	}
	work := make(chan file, 64)
	errs := make(chan error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for f := range work {
				if err := os.WriteFile(f.name, f.data, f.perm); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
