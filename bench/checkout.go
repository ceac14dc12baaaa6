//go:build linux

package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Working-copy checkout, on two stores: "many files" (make bench's large
// repository, -files files in its working copy, 20,000 by default: the
// per-file cost) and
// "real history" (the corpus bundle unbundled by hg: distant revisions):
//
//   - `hgfs clone --stream URL DEST` against `hg clone --stream URL DEST`,
//     both from one `hg serve` started for the case (as the stream clone
//     cases), checking out the default revision. Goal: 0.3x hg's time;
//   - `hgfs update null` then `hgfs update tip` (one timed shell command)
//     in a clone of each side's own making, against the same with hg.
//     Goal: 0.3x hg's time;
//   - an update between two distant revisions (the real history's
//     checkoutFrom and tip; the large store's first changeset and its
//     tip): each run is brought to the first revision untimed and updated
//     to the second timed, against hg update doing the same. Goal: 0.3x;
//   - the checkout itself (`hgfs update tip` in a fresh `hg clone -U` of
//     the store, made untimed: hardlinks, no new inodes) against `tar -x`
//     of the same working files (a tarball of hg's checkout, without .hg,
//     made once): the cost of creating the files at all. Goal: 1.3x.
//
// Peak RSS should not grow with the store: compare the "hgfs RSS" column
// of the two stores. Every pair of runs is checked: both destinations'
// working files (outside .hg) must have the same names, sizes, kinds and
// exec bits.
func init() {
	for _, k := range historyStores {
		registerCheckout(k)
	}
}

// checkoutFrom is where the real-history update case starts: a thousand
// changesets before the corpus's tip.
const checkoutFrom = "1970"

func registerCheckout(k storeKind) {
	sfx := " (" + k.label + ")"
	type state struct {
		lifecycle
		repo       string
		srv        *hgServe
		work       string
		run        int
		hgfs, peer string // the destinations of the last run
		tarball    string
		from       string
	}
	setup := func(st *state, serve, clones bool) func(ctx context.Context, env *Env) (any, error) {
		return func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			var err error
			if st.repo, err = k.repo(ctx, env); err != nil {
				return nil, err
			}
			if st.work, err = st.scratch(env, "checkout"); err != nil {
				return nil, err
			}
			st.run = 0
			st.from = "0"
			if k.label == "real history" {
				st.from = checkoutFrom
			}
			if serve {
				if st.srv, err = startHgServe(env, st.repo); err != nil {
					return nil, err
				}
				st.onFinish(st.srv.stop)
			}
			if clones {
				// One clone per side, reused by every run.
				st.hgfs = filepath.Join(st.work, "hgfs")
				st.peer = filepath.Join(st.work, "peer")
				if err := runQuiet(hgfsCmd(env, "clone", "-q", st.repo, st.hgfs), env); err != nil {
					return nil, err
				}
				if err := runQuiet(hgCmd(env, "clone", "-q", st.repo, st.peer), env); err != nil {
					return nil, err
				}
			}
			base := filepath.Base(st.repo)
			key := readString(filepath.Join(env.Cache, base+".done"))
			if st.tarball, err = cachedPath(env, base+".files.tar", key, func(p string) error {
				tmp := filepath.Join(st.work, "tarball-source")
				if err := runQuiet(hgCmd(env, "clone", "-q", st.repo, tmp), env); err != nil {
					return err
				}
				return runQuiet(exec.Command("tar", "-cf", p, "--exclude=./.hg", "-C", tmp, "."), env)
			}); err != nil {
				return nil, err
			}
			return st, nil
		}
	}
	// fresh names a new directory per run; earlier ones stay until the
	// bench ends (see trash.go), and the sync keeps their writeback out of
	// the timed run.
	fresh := func(st *state, side string) string {
		st.run++
		return filepath.Join(st.work, fmt.Sprintf("%s-%d", side, st.run))
	}
	sync := func() error { return exec.Command("sync").Run() }
	check := func(st *state) func(h, p []byte) error {
		return st.check(func(_, _ []byte) error { return sameWorkingFiles(st.hgfs, st.peer) })
	}

	{
		st := &state{}
		register(&Case{Name: "checkout: clone --stream from hg serve vs hg" + sfx, Goal: 0.3, Setup: setup(st, true, false),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				st.hgfs = fresh(st, "hgfs")
				if err := sync(); err != nil {
					return failCmd(err)
				}
				return hgfsCmd(env, "clone", "-q", "--stream", st.srv.url, st.hgfs)
			},
			Peer: func(env *Env, _ any) *exec.Cmd {
				st.peer = fresh(st, "peer")
				if err := sync(); err != nil {
					return failCmd(err)
				}
				return hgCmd(env, "clone", "-q", "--stream", st.srv.url, st.peer)
			},
			Check: check(st)})
	}
	{
		st := &state{}
		both := func(env *Env, tool, dir string) *exec.Cmd {
			c := exec.Command("sh", "-c", `"$1" -R "$2" update -q null && "$1" -R "$2" update -q tip`, "sh", tool, dir)
			c.Env = env.HgEnv
			return c
		}
		register(&Case{Name: "checkout: update null, update tip vs hg" + sfx, Goal: 0.3, Setup: setup(st, false, true),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				if err := sync(); err != nil {
					return failCmd(err)
				}
				return both(env, env.Hgfs, st.hgfs)
			},
			Peer: func(env *Env, _ any) *exec.Cmd {
				if err := sync(); err != nil {
					return failCmd(err)
				}
				return both(env, env.Hg, st.peer)
			},
			Check: check(st)})
	}
	{
		st := &state{}
		to := func(env *Env, tool, dir string) *exec.Cmd {
			c := exec.Command(tool, "-R", dir, "update", "-q", "-r", st.from)
			c.Env = env.HgEnv
			if err := runQuiet(c, env); err != nil {
				return failCmd(err)
			}
			if err := sync(); err != nil {
				return failCmd(err)
			}
			c = exec.Command(tool, "-R", dir, "update", "-q", "-r", "tip")
			c.Env = env.HgEnv
			return c
		}
		register(&Case{Name: "checkout: update between distant revisions vs hg" + sfx, Goal: 0.3, Setup: setup(st, false, true),
			Hgfs:  func(env *Env, _ any) *exec.Cmd { return to(env, env.Hgfs, st.hgfs) },
			Peer:  func(env *Env, _ any) *exec.Cmd { return to(env, env.Hg, st.peer) },
			Check: check(st)})
	}
	{
		st := &state{}
		register(&Case{Name: "checkout: update tip in a -U clone vs tar -x" + sfx, Goal: 1.3, Setup: setup(st, false, false),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				st.hgfs = fresh(st, "hgfs")
				if err := runQuiet(hgCmd(env, "clone", "-q", "-U", st.repo, st.hgfs), env); err != nil {
					return failCmd(err)
				}
				if err := sync(); err != nil {
					return failCmd(err)
				}
				return hgfsCmd(env, "-R", st.hgfs, "update", "-q", "tip")
			},
			Peer: func(env *Env, _ any) *exec.Cmd {
				st.peer = fresh(st, "peer")
				if err := os.MkdirAll(st.peer, 0o755); err != nil {
					return failCmd(err)
				}
				if err := sync(); err != nil {
					return failCmd(err)
				}
				return exec.Command("tar", "-xf", st.tarball, "-C", st.peer)
			},
			Check: check(st)})
	}
}

// sameWorkingFiles checks that two working copies hold the same files
// outside .hg: names, sizes, kinds (file, symlink) and exec bits.
func sameWorkingFiles(a, b string) error {
	la, err := workingFiles(a)
	if err != nil {
		return err
	}
	return sameFiles(la, a, b)
}

// sameFiles checks that la, workingFiles of a (read earlier: a may be
// gone), describes the same files as b holds now.
func sameFiles(la map[string]string, a, b string) error {
	lb, err := workingFiles(b)
	if err != nil {
		return err
	}
	if len(la) == 0 {
		return fmt.Errorf("%s: no working files", a)
	}
	for name, fa := range la {
		if fb, ok := lb[name]; !ok {
			return fmt.Errorf("%s is in %s but not in %s", name, a, b)
		} else if fa != fb {
			return fmt.Errorf("%s: %s in %s, %s in %s", name, fa, a, fb, b)
		}
	}
	for name := range lb {
		if _, ok := la[name]; !ok {
			return fmt.Errorf("%s is in %s but not in %s", name, b, a)
		}
	}
	return nil
}

// workingFiles describes each file under root outside root/.hg as its
// kind, exec bit and size.
func workingFiles(root string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root)
		if d.IsDir() {
			if rel == string(filepath.Separator)+".hg" {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files[rel] = fmt.Sprintf("%v %d", fi.Mode()&(fs.ModeType|0o100), fi.Size())
		return nil
	})
	return files, err
}
