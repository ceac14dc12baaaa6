//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The virtual working copy (issue 24), on the 20,000-file store: a
// mounted clone's working files name their revisions until written.
//
//   - `hgfs clone --mount` of the stream bundle with its checkout against
//     the same with -U. Goal: the checkout adds at most 0.2x (1.2). Its
//     floor: the -U clone and each working file's exact size learnt
//     once (checkoutfloor.go), against hgfs and against the -U clone;
//   - `hg status` on a freshly mounted virtual working copy against
//     `hg status` on a native hg clone. Goal: within 2x;
//   - `hgfs update tip` on the mount (brought to the first changeset
//     untimed) against `hg update tip` natively. Goal: 0.05x. Its floor
//     line: `hgfs update tip` again, at tip, the fixed cost of an update
//     in this design (the process started, dirstate and both manifests
//     read, the files changed since the last update checked, the
//     dirstate written);
//   - `cat` of every working file on a fresh mount against native. No
//     goal (the first read of a virtual file reconstructs it).
//
// A fresh mount is an unmount and a mount, untimed, in the builder.

func init() { registerVirtualCases() }

func registerVirtualCases() {
	kind := storeKinds[0]
	type vstate struct {
		lifecycle
		in           *storeInputs
		work         string
		cache, mnt   string // the virtual working copy
		cacheU, mntU string // clone -U's
		cacheF, mntF string // the floor's -U clone
		native       string
		run          int
	}
	setup := func(st *vstate, clone bool) func(ctx context.Context, env *Env) (any, error) {
		return func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			var err error
			if st.in, err = loadInputs(ctx, env, kind); err != nil {
				return nil, err
			}
			if st.work, err = st.scratch(env, "virtual"); err != nil {
				return nil, err
			}
			st.cache, st.mnt = filepath.Join(st.work, "cache"), filepath.Join(st.work, "mnt")
			st.cacheU, st.mntU = filepath.Join(st.work, "cacheU"), filepath.Join(st.work, "mntU")
			st.cacheF, st.mntF = filepath.Join(st.work, "cacheF"), filepath.Join(st.work, "mntF")
			st.native = filepath.Join(st.work, "native")
			st.run = 0
			st.onFinish(func() { _ = unmountHgfs(env, st.mnt); _ = unmountHgfs(env, st.mntU); _ = unmountHgfs(env, st.mntF) })
			if clone {
				if err := runQuiet(guarded(env, hgfsCmd(env, "clone", "-q", "--mount", "--cache", st.cache, st.in.bundle, st.mnt), st.mnt), env); err != nil {
					return nil, err
				}
				if err := runQuiet(hgCmd(env, "clone", "-q", st.in.repo, st.native), env); err != nil {
					return nil, err
				}
			}
			return st, nil
		}
	}
	// fresh unmounts mp and removes its cache, then syncs so that the
	// previous runs' writeback stays out of the timed run.
	fresh := func(env *Env, cache, mp string) error {
		if err := unmountHgfs(env, mp); err != nil {
			return err
		}
		if err := os.RemoveAll(cache); err != nil {
			return err
		}
		if err := os.MkdirAll(mp, 0o755); err != nil {
			return err
		}
		return exec.Command("sync").Run()
	}
	// remount makes the virtual working copy's mount fresh: no kernel
	// caches, no reconstructed revisions in the daemon.
	remount := func(env *Env, st *vstate) error {
		if err := unmountHgfs(env, st.mnt); err != nil {
			return err
		}
		return mountHgfs(env, st.cache, st.mnt)
	}
	{
		st := &vstate{}
		register(&Case{Name: "virtual: clone --mount with checkout vs -U", Goal: 1.2, Setup: setup(st, false),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				if err := fresh(env, st.cache, st.mnt); err != nil {
					return failCmd(err)
				}
				return guarded(env, hgfsCmd(env, "clone", "-q", "--mount", "--cache", st.cache, st.in.bundle, st.mnt), st.mnt)
			},
			Peer: func(env *Env, _ any) *exec.Cmd {
				if err := fresh(env, st.cacheU, st.mntU); err != nil {
					return failCmd(err)
				}
				return guarded(env, hgfsCmd(env, "clone", "-q", "-U", "--mount", "--cache", st.cacheU, st.in.bundle, st.mntU), st.mntU)
			},
			// The floor of any virtual checkout with exact sizes
			// (checkoutfloor.go): the -U clone, then each working
			// file's size learnt once. Its row against the -U clone
			// says how far the goal is from reach.
			Floor: func(env *Env, _ any) *exec.Cmd {
				if err := fresh(env, st.cacheF, st.mntF); err != nil {
					return failCmd(err)
				}
				clone := hgfsCmd(env, "clone", "-q", "-U", "--mount", "--cache", st.cacheF, st.in.bundle, st.mntF)
				return guarded(env, checkoutFloorCmd(env, st.in.bundle, clone), st.mntF)
			},
			FloorName: checkoutFloorName, FloorVsPeer: true,
			Check: st.check(nil)})
	}
	{
		st := &vstate{}
		register(&Case{Name: "virtual: hg status on a fresh virtual working copy vs native", Goal: 2, Setup: setup(st, true),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				if err := remount(env, st); err != nil {
					return failCmd(err)
				}
				return hgCmd(env, "-R", st.mnt, "status")
			},
			Peer: func(env *Env, _ any) *exec.Cmd { return hgCmd(env, "-R", st.native, "status") },
			Check: st.check(func(h, p []byte) error {
				if len(h) > 0 || len(p) > 0 {
					return fmt.Errorf("hg status not clean:\n%s\n%s", h, p)
				}
				return nil
			})})
	}
	{
		st := &vstate{}
		register(&Case{Name: "virtual: hgfs update 0 -> tip on the mount vs hg update native", Goal: 0.05, Setup: setup(st, true),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				if err := runQuiet(hgfsCmd(env, "-R", st.mnt, "update", "-q", "0"), env); err != nil {
					return failCmd(err)
				}
				return hgfsCmd(env, "-R", st.mnt, "update", "-q", "tip")
			},
			Peer: func(env *Env, _ any) *exec.Cmd {
				if err := runQuiet(hgCmd(env, "-R", st.native, "update", "-q", "0"), env); err != nil {
					return failCmd(err)
				}
				if err := exec.Command("sync").Run(); err != nil {
					return failCmd(err)
				}
				return hgCmd(env, "-R", st.native, "update", "-q", "tip")
			},
			// The floor of this design: the same command when the mount
			// is at tip already, which starts the hgfs process, reads the
			// dirstate and both manifests, checks the files that changed
			// since the daemon's last update (mount/update_watch_linux.go)
			// and writes the dirstate, and moves no file.
			Floor:     func(env *Env, _ any) *exec.Cmd { return hgfsCmd(env, "-R", st.mnt, "update", "-q", "tip") },
			FloorName: "hgfs update tip on the mount at tip (all but moving files)",
			Check:     st.check(func(_, _ []byte) error { return sameWorkingFiles(st.mnt, st.native) })})
	}
	{
		st := &vstate{}
		catWorking := func(dir string) *exec.Cmd {
			return exec.Command("bash", "-o", "pipefail", "-c", `cd "$1" && find . -path ./.hg -prune -o -type f -print0 | xargs -0 cat | wc -c`, "bash", dir)
		}
		register(&Case{Name: "virtual: cat of every working file on a fresh mount vs native", Setup: setup(st, true),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				if err := remount(env, st); err != nil {
					return failCmd(err)
				}
				return catWorking(st.mnt)
			},
			Peer: func(env *Env, _ any) *exec.Cmd { return catWorking(st.native) },
			Check: st.check(func(h, p []byte) error {
				if string(h) != string(p) {
					return fmt.Errorf("bytes read: mount %s, native %s", h, p)
				}
				return nil
			})})
	}
}
