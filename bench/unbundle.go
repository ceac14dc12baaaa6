//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Unbundle (issues 6 and 19): `hgfs unbundle` against `hg unbundle` of
// the same changegroup bundle into an empty repository made by `hg init`
// before the timer starts, on two inputs: "many files", `hg bundle -a -t
// zstd-v2` of make bench's large repository (20,000 files by default, one
// revision each: the per-file cost), and "real history", the workspace's
// corpus bundle (Mercurial's first 2,971 changesets: long delta chains,
// many revisions per file). Goal: 0.3x hg's time. The case also counts
// system calls once per side under strace -f -c (Mercurial's own measure
// when it stopped flushing per revision): goal, at most half of hg's
// write calls.
//
// Each pair is checked: both repositories have the same revlog names and
// the same tip; stored sizes may differ (hgfs chooses its own deltas), so
// hgfs's repository also passes hg verify after the first run.

func init() {
	registerUnbundle("many files", largeBundle)
	registerUnbundle("real history", historyBundle)
}

func registerUnbundle(label string, bundle func(ctx context.Context, env *Env) (string, error)) {
	type unbundleState struct {
		lifecycle
		env          *Env
		bundle       string
		work         string
		run          int
		hgfs, peer   string
		verifiedOnce bool
	}
	st := &unbundleState{}
	// fresh makes an empty repository for a run, in a new directory: the
	// previous runs' repositories stay until the bench ends (scratch,
	// then the trash). Deleting between runs made each run slower than
	// the last, for both sides (see trash.go). The sync keeps the
	// previous run's writeback out of the timed run.
	fresh := func(dir string) error {
		if err := runQuiet(exec.Command(st.env.Hg, "init", dir), st.env); err != nil {
			return err
		}
		return exec.Command("sync").Run()
	}
	register(&Case{
		Name: "unbundle vs hg unbundle (" + label + ")", Goal: 0.3, Syscalls: true,
		Setup: func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			st.env, st.verifiedOnce = env, false
			var err error
			if st.bundle, err = bundle(ctx, env); err != nil {
				return nil, err
			}
			work, err := st.scratch(env, "unbundle")
			if err != nil {
				return nil, err
			}
			st.work, st.run = work, 0
			return st, nil
		},
		Hgfs: func(env *Env, _ any) *exec.Cmd {
			st.run++
			st.hgfs = filepath.Join(st.work, fmt.Sprintf("hgfs-%d", st.run))
			st.peer = filepath.Join(st.work, fmt.Sprintf("peer-%d", st.run))
			if err := fresh(st.hgfs); err != nil {
				return failCmd(err)
			}
			return hgfsCmd(env, "-R", st.hgfs, "unbundle", "-q", st.bundle)
		},
		Peer: func(env *Env, _ any) *exec.Cmd {
			if err := fresh(st.peer); err != nil {
				return failCmd(err)
			}
			return hgCmd(env, "-R", st.peer, "unbundle", "-q", st.bundle)
		},
		Check: st.check(func(_, _ []byte) error {
			return sameHistory(st.env, st.hgfs, st.peer, &st.verifiedOnce)
		}),
	})
}

// sameHistory checks what a changegroup applied by hgfs and by hg gives:
// the same revlog names and the same tip; hgfs's repository also passes
// hg verify, once per case (*verified).
func sameHistory(env *Env, hgfs, peer string, verified *bool) error {
	if err := sameRevlogNames(hgfs, peer); err != nil {
		return err
	}
	tip := func(repo string) ([]byte, error) {
		return hgCmd(env, "-R", repo, "log", "-r", "tip", "-T", "{node}").Output()
	}
	a, err := tip(hgfs)
	if err != nil {
		return err
	}
	b, err := tip(peer)
	if err != nil {
		return err
	}
	if !bytes.Equal(a, b) {
		return fmt.Errorf("tips differ: hgfs %s, hg %s", a, b)
	}
	if !*verified {
		*verified = true
		if out, err := hgCmd(env, "-R", hgfs, "verify", "-q").CombinedOutput(); err != nil {
			return fmt.Errorf("hg verify of hgfs's repository: %v\n%s", err, out)
		}
	}
	return nil
}

// sameRevlogNames checks that two repositories' stores hold revlogs of
// the same names.
func sameRevlogNames(a, b string) error {
	la, err := revlogSizes(a)
	if err != nil {
		return err
	}
	lb, err := revlogSizes(b)
	if err != nil {
		return err
	}
	names := func(m map[string]int64) string {
		var l []string
		for n := range m {
			l = append(l, n)
		}
		sort.Strings(l)
		return strings.Join(l, "\n")
	}
	if len(la) == 0 {
		return fmt.Errorf("%s: no revlogs", a)
	}
	if names(la) != names(lb) {
		return fmt.Errorf("revlog names differ between %s (%d) and %s (%d)", a, len(la), b, len(lb))
	}
	return nil
}
