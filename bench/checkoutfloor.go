//go:build linux

package main

// The floor of a virtual checkout at clone time (issue 24's first goal:
// the checkout adds at most 0.2x to the -U clone). A virtual working
// file costs no bytes, but its size does: the mount reports it and the
// dirstate records it (hg status compares it; a size hg cannot trust
// makes it read the file), and a file's size is its content's length,
// which the index's raw length gives only when the text carries no
// metadata header (copy metadata, or the escape of a text starting with
// "\1\n"; hg's filelog.size has the same caveat). Knowing that takes the
// text's first bytes: each snapshot's chunk decompressed, or the delta
// chain rebuilt.
//
// The floor is the -U clone followed by that knowledge and nothing
// else: this binary as a child (checkoutFloorFlag) runs the same
// hgfs clone -U, then reads the stream bundle again into memory (one
// copy of its bytes: what the clone had in hand as it wrote the store)
// and, on GOMAXPROCS goroutines, learns the exact size of each
// filelog's last revision (the tip's files, in the bench's linear
// history): a snapshot's chunk decompressed (revlog.SnapshotFileSize),
// anything else rebuilt, neither hashed (the clone's worktree.Sizes
// hashes the snapshots it sizes, and sizes no delta). No filelog opened
// from a file system, no records, no dirstate: what any exact-size
// virtual checkout does at least, and more by the stream read a second
// time (about 45 ms of the floor on the 20,000-file store, 2026-12-05:
// the child with the sizes left out, by hand).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/streamclone"
)

const (
	checkoutFloorFlag = "-child-checkout-floor"
	checkoutFloorName = "the -U clone, then each working file's exact size, once"
)

func init() {
	if len(os.Args) > 2 && os.Args[1] == checkoutFloorFlag {
		if err := checkoutFloor(os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "checkout floor:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// checkoutFloorCmd is the floor's command: clone (an hgfs command line,
// run first) and then the sizes learnt from the stream bundle at
// bundle.
func checkoutFloorCmd(env *Env, bundle string, clone *exec.Cmd) *exec.Cmd {
	c := exec.Command(env.Self, append([]string{checkoutFloorFlag, bundle, clone.Path}, clone.Args[1:]...)...)
	c.Env = clone.Env
	return c
}

// checkoutFloor runs clone, then reads the stream bundle into memory
// (streamclone.ApplyBundle into memSink: one copy of its bytes) and
// sizes the last revision of each filelog on GOMAXPROCS goroutines: in
// the bench's linear history, the tip's files.
func checkoutFloor(bundle string, clone []string) error {
	if len(clone) == 0 {
		return errors.New("no clone command")
	}
	c := exec.Command(clone[0], clone[1:]...)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w", clone[0], err)
	}
	f, err := os.Open(bundle)
	if err != nil {
		return err
	}
	defer f.Close()
	sink := newMemSink()
	_, err = streamclone.ApplyBundle(context.Background(), f, sink, streamclone.Options{})
	if err != nil {
		return errors.Join(err, sink.Abort())
	}
	fmt.Printf("%d files, %d bytes\n", sink.files.Load(), sink.bytes.Load())
	return nil
}

// memSink keeps each filelog in memory until it is whole and has a
// worker size its last revision.
type memSink struct {
	jobs  chan [2]*memFile // index, data (nil when inline)
	wg    sync.WaitGroup
	mu    sync.Mutex
	split map[string]*memFile // a split filelog's first half, by base name
	errs  []error
	files atomic.Int64
	bytes atomic.Int64
}

type memFile struct {
	s    *memSink
	name string
	b    []byte
}

func newMemSink() *memSink {
	s := &memSink{jobs: make(chan [2]*memFile, 64), split: map[string]*memFile{}}
	s.errs = make([]error, runtime.GOMAXPROCS(0))
	jobs := s.jobs // stop clears the field
	for w := range s.errs {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for j := range jobs {
				if s.errs[w] != nil {
					continue
				}
				var data []byte
				if j[1] != nil {
					data = j[1].b
				}
				fl, err := revlog.FromBytes(j[0].name, j[0].b, data)
				if err != nil {
					s.errs[w] = err
					continue
				}
				if fl.Len() == 0 {
					continue
				}
				n, err := exactSizeRev(fl, fl.Len()-1)
				s.errs[w] = err
				s.files.Add(1)
				s.bytes.Add(n)
			}
		}()
	}
	return s
}

func (s *memSink) Create(name string, size int64) (io.WriteCloser, error) {
	if size < 0 || size > revlog.MaxTextLen {
		return nil, fmt.Errorf("%s: size %d", name, size)
	}
	return &memFile{s: s, name: name, b: make([]byte, 0, size)}, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.b = append(f.b, p...)
	return len(p), nil
}

func (f *memFile) Close() error {
	s := f.s
	if !strings.HasPrefix(f.name, ".hg/store/data/") {
		return nil
	}
	base, ext := f.name[:len(f.name)-2], f.name[len(f.name)-2:]
	switch {
	case ext == ".i" && revlog.IndexInline(f.b):
		s.jobs <- [2]*memFile{f, nil}
	case ext == ".i" || ext == ".d":
		s.mu.Lock()
		other, ok := s.split[base]
		if ok {
			delete(s.split, base)
		} else {
			s.split[base] = f
		}
		s.mu.Unlock()
		if ok {
			if ext == ".d" {
				f, other = other, f
			}
			s.jobs <- [2]*memFile{f, other}
		}
	}
	return nil
}

func (s *memSink) Finish() error {
	s.stop()
	return errors.Join(s.errs...)
}

func (s *memSink) Abort() error {
	s.stop()
	return nil
}

// stop waits for the workers, once.
func (s *memSink) stop() {
	if s.jobs != nil {
		close(s.jobs)
		s.jobs = nil
		s.wg.Wait()
	}
}

// exactSizeRev is the length of rev's content in filelog fl: the
// snapshot's decompressed length less its metadata header
// (revlog.SnapshotFileSize), else the rebuilt text's body, without the
// hash check.
func exactSizeRev(fl *revlog.Revlog, rev int) (int64, error) {
	if n, ok, err := fl.SnapshotFileSize(rev); err != nil || ok {
		return n, err
	}
	text, err := fl.RevisionUnchecked(rev)
	if err != nil {
		return 0, err
	}
	_, body, err := revlog.ParseFileMeta(text)
	return int64(len(body)), err
}
