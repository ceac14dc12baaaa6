//go:build linux

package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// The .hgfs/ views (issue 9): `grep -r` over .hgfs/rev/tip of make
// bench's large repository (-files, 20,000 by default), mounted
// read-only with `hgfs mount REPO MNT`, against `grep -r` over a real
// checkout of the same revision on the native disk (its .hg excluded, so
// both read the same files). First read: a fresh mount each run, so
// every file is reconstructed from its revlog (goal 3x); second read:
// one mount, read once before timing (goal 1.5x). The native side reads
// from the page cache either way (see mount.go).
// Both sides print the checksum of the sorted list of matching files,
// which must agree.

// grepFor occurs in a few percent of the generated files' lines (their
// lines are "PATH line OFFSET HEX").
const grepFor = "line 43 7"

type viewState struct {
	lifecycle
	repo, checkout, mnt string
}

func init() {
	setup := func(st *viewState, warm bool) func(ctx context.Context, env *Env) (any, error) {
		return func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			var err error
			if st.repo, err = largeRepo(ctx, env); err != nil {
				return nil, err
			}
			key := readString(filepath.Join(env.Cache, filepath.Base(st.repo)+".done"))
			if st.checkout, err = cachedPath(env, filepath.Base(st.repo)+"-checkout", key, func(p string) error {
				return runQuiet(hgCmd(env, "clone", "-q", st.repo, p), env)
			}); err != nil {
				return nil, err
			}
			work, err := st.scratch(env, "views")
			if err != nil {
				return nil, err
			}
			st.mnt = filepath.Join(work, "mnt")
			st.onFinish(func() { _ = unmountHgfs(env, st.mnt) })
			if warm {
				if err := mountHgfs(env, st.repo, st.mnt); err != nil {
					return nil, err
				}
				if err := runQuiet(grepTree(st.tipView()), env); err != nil {
					return nil, err
				}
			}
			return st, nil
		}
	}
	same := func(h, p []byte) error {
		if string(h) != string(p) {
			return fmt.Errorf("matching files differ: view %q, checkout %q", h, p)
		}
		return nil
	}
	{
		st := &viewState{}
		register(&Case{Name: "grep -r .hgfs/rev/tip, first read vs checkout", Goal: 3, Setup: setup(st, false),
			Hgfs: func(env *Env, d any) *exec.Cmd {
				if err := unmountHgfs(env, st.mnt); err != nil {
					return failCmd(err)
				}
				if err := mountHgfs(env, st.repo, st.mnt); err != nil {
					return failCmd(err)
				}
				return guarded(env, grepTree(st.tipView()), st.mnt)
			},
			Peer: func(env *Env, d any) *exec.Cmd {
				if err := unmountHgfs(env, st.mnt); err != nil {
					return failCmd(err)
				}
				return grepTree(st.checkout)
			},
			Check: st.check(same)})
	}
	{
		st := &viewState{}
		register(&Case{Name: "grep -r .hgfs/rev/tip, second read vs checkout", Goal: 1.5, Setup: setup(st, true),
			Hgfs:  func(env *Env, d any) *exec.Cmd { return guarded(env, grepTree(st.tipView()), st.mnt) },
			Peer:  func(env *Env, d any) *exec.Cmd { return guarded(env, grepTree(st.checkout), st.mnt) },
			Check: st.check(same)})
	}
}

func (st *viewState) tipView() string { return filepath.Join(st.mnt, ".hgfs", "rev", "tip") }

// grepTree greps every file under dir except .hg for grepFor and prints
// how many matched and a checksum of their sorted relative names.
func grepTree(dir string) *exec.Cmd {
	return exec.Command("bash", "-o", "pipefail", "-c",
		`cd "$1" && m=$(grep -rlF --exclude-dir=.hg -e "$2" . | LC_ALL=C sort) && printf '%s\n' "$m" | wc -l && printf '%s\n' "$m" | md5sum`, "bash", dir, grepFor)
}
