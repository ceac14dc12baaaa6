//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/hgfs/hgfs/internal/mmapload"
)

// Memory-mapped I/O through the mount (issue 21), on a fresh cache
// mounted by the real binary against a file on the native disk, both
// worked on by a child (this binary, mmapChildFlag, running package
// mmapload: a process must not map files of a FUSE mount it serves, and
// the bench serves none, but the child keeps the timed work alone):
//
//   - mmap reads: a 64 MiB file mapped and copied out page by page, in
//     order and then 4,096 pages at random, every page checked. The
//     mount side first drops its file's cached pages (fadvise
//     DONTNEED), so every page comes through FUSE from the cache's data
//     files; the native side reads from the page cache, as in the other
//     cases (dropping a native file's pages would time the disk).
//   - mapped writes with msync(MS_SYNC) after each: a 4 MiB file written
//     with write(2), then one byte stored in each of 300 pages chosen at
//     random through a shared mapping, each store made durable. Through
//     the mount every msync is a WRITE and an FSYNC waiting for fsnode's
//     durable commit; natively an ext4 fsync.
//   - an fsx-like mix of 5,000 operations on a file of up to 256 KiB:
//     read(2), write(2), mapped reads, mapped writes (msync without
//     MS_SYNC, as fsx does), ftruncate, close and reopen, every read
//     checked against a model of the file.

const (
	mmapChildFlag = "-child-mmap"
	mmapFileSize  = 64 << 20
	mmapRandPages = 4096
	mmapFsxOps    = 5000
	mmapSyncSize  = 4 << 20
	mmapSyncs     = 300
)

func init() {
	// Dispatched here, as the close() latency child is in mount.go.
	if len(os.Args) > 1 && os.Args[1] == mmapChildFlag {
		os.Exit(mmapChild(os.Args[2:]))
	}
	registerMmapCases()
}

// mmapChild runs its arguments' workloads in turn (mmapload.Main, each
// a list of arguments separated by "--") and prints nothing: the bench
// times the whole child.
func mmapChild(args []string) int {
	var cur []string
	run := func() int {
		if len(cur) == 0 {
			return 0
		}
		out, err := os.CreateTemp("", "hgfs-bench-mmap-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.Remove(out.Name())
		defer out.Close()
		stdout := os.Stdout
		os.Stdout = out // mmapload.Main prints each workload's time
		code := mmapload.Main(cur)
		os.Stdout = stdout
		cur = nil
		return code
	}
	for _, a := range args {
		if a == "--" {
			if code := run(); code != 0 {
				return code
			}
			continue
		}
		cur = append(cur, a)
	}
	return run()
}

func registerMmapCases() {
	type mmapState struct {
		lifecycle
		mnt, native string
	}
	setup := func(st *mmapState, fill bool) func(ctx context.Context, env *Env) (any, error) {
		return func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			work, err := st.scratch(env, "mmap")
			if err != nil {
				return nil, err
			}
			cache := filepath.Join(work, "cache")
			st.mnt, st.native = filepath.Join(work, "mnt"), filepath.Join(work, "native")
			if err := os.MkdirAll(st.native, 0o755); err != nil {
				return nil, err
			}
			if err := mountHgfs(env, cache, st.mnt); err != nil {
				return nil, err
			}
			st.onFinish(func() { _ = unmountHgfs(env, st.mnt) })
			if fill {
				for _, dir := range []string{st.mnt, st.native} {
					if err := mmapload.Fill(filepath.Join(dir, "big"), mmapFileSize); err != nil {
						return nil, err
					}
				}
			}
			return st, nil
		}
	}
	// mmapCase registers a case whose sides run the child with
	// args(dir, mount, run): dir is the mount or the native directory,
	// run counts the hgfs side's runs from 1.
	mmapCase := func(name string, fill bool, args func(dir string, mount bool, run int) []string) {
		st := &mmapState{}
		run := 0
		side := func(env *Env, dir string, mount bool) *exec.Cmd {
			cmd := exec.Command(env.Self, append([]string{mmapChildFlag}, args(dir, mount, run)...)...)
			return guarded(env, cmd, st.mnt)
		}
		register(&Case{Name: name, Setup: setup(st, fill),
			Hgfs: func(env *Env, d any) *exec.Cmd {
				run++
				return side(env, st.mnt, true)
			},
			Peer:  func(env *Env, d any) *exec.Cmd { return side(env, st.native, false) },
			Check: st.check(nil)})
	}
	mmapCase("mmap reads of a 64 MiB file, mount vs native", true, func(dir string, mount bool, _ int) []string {
		file := filepath.Join(dir, "big")
		var args []string
		if mount {
			args = []string{"drop", file, "--"}
		}
		return append(args, "seqread", file, "--", "randread", file, strconv.Itoa(mmapRandPages), "1")
	})
	// A new file each run: writesync checks the file against what fill
	// wrote and its own stores.
	mmapCase("mapped writes, msync after each, mount vs native", false, func(dir string, _ bool, run int) []string {
		file := filepath.Join(dir, fmt.Sprint("sync", run))
		return []string{"fill", file, strconv.Itoa(mmapSyncSize), "--",
			"writesync", file, strconv.Itoa(mmapSyncs), "1", strconv.Itoa(run)}
	})
	mmapCase("fsx-like mmap mix, mount vs native", false, func(dir string, _ bool, run int) []string {
		return []string{"fsx", filepath.Join(dir, fmt.Sprint("fsx", run)), strconv.Itoa(mmapFsxOps), strconv.Itoa(run)}
	})
}
