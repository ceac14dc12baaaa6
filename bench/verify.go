//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hgfs/hgfs/internal/hggen"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// hgfs verify against hg verify: on the large generated store (20,000
// files, a short history), on the real-history corpus (Mercurial's first
// 2,971 changesets) and on a generated history of 30,000 changesets of
// the same shape (hggen.Evolution: a few files per changeset, long delta
// chains). Both check the same things (every changelog and filelog
// revision rebuilt and hashed, manifests read as deltas, linkrevs,
// cross-references, fncache); the final count lines must agree.
//
// Goals (issue 26): at most 0.2x hg verify's time, and peak RSS at most
// hg's (the row "the same, peak RSS" under each case).
//
// The floor beside each is the least work any verify must do: this
// binary as a child (verifyFloorFlag) rebuilding and hashing every
// revision that hg verify hashes, once, in order along each revlog,
// decompressing the other manifest chunks, on GOMAXPROCS goroutines
// across revlogs, and nothing else (no parsing, no cross-checks).
const (
	verifyFloorFlag = "-child-verify-floor"
	verifyFloorName = "rebuild+SHA-1 of what hg verify hashes, once"
	// evolveChangesets is the generated long history's length.
	evolveChangesets = 30000
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == verifyFloorFlag {
		if err := verifyFloor(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "verify floor:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	verifyCase := func(name string, setup func(ctx context.Context, env *Env) (string, error)) *Case {
		return &Case{
			Name:    name,
			Goal:    0.2,
			RSSGoal: 1,
			Setup: func(ctx context.Context, env *Env) (any, error) {
				return setup(ctx, env)
			},
			Hgfs: func(env *Env, data any) *exec.Cmd {
				return exec.Command(env.Hgfs, "-R", data.(string), "verify")
			},
			Peer: func(env *Env, data any) *exec.Cmd {
				c := exec.Command(env.Hg, "-R", data.(string), "verify")
				c.Env = env.HgEnv
				return c
			},
			Check: func(h, p []byte) error {
				if lastLine(h) != lastLine(p) {
					return fmt.Errorf("hgfs %q, hg %q", lastLine(h), lastLine(p))
				}
				return nil
			},
			Floor: func(env *Env, data any) *exec.Cmd {
				return exec.Command(env.Self, verifyFloorFlag, data.(string))
			},
			FloorName: verifyFloorName, FloorVsPeer: true,
		}
	}
	register(verifyCase("verify (large repo)", func(ctx context.Context, env *Env) (string, error) {
		return cachedRepo(ctx, env, fmt.Sprintf("large-%d", largeFiles), hggen.Large(largeFiles))
	}))
	register(verifyCase("verify (real history, 2,971 changesets)", historyRepo))
	register(verifyCase(fmt.Sprintf("verify (generated history, %dk changesets)", evolveChangesets/1000), func(ctx context.Context, env *Env) (string, error) {
		return cachedRepo(ctx, env, fmt.Sprintf("evolve-%d", evolveChangesets), hggen.Evolution(evolveChangesets))
	}))
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}

// verifyFloor rebuilds and hashes (Revision) every changelog and
// filelog revision of the repository at root and every manifest
// revision stored whole, and decompresses the other manifest chunks.
func verifyFloor(root string) error {
	r, err := repo.Open(root)
	if err != nil {
		return err
	}
	defer r.Close()
	entries, err := r.Store.Fncache()
	if err != nil {
		return err
	}
	var paths []string
	for _, e := range entries {
		if p, ok := strings.CutPrefix(e, "data/"); ok {
			if p, ok = strings.CutSuffix(p, ".i"); ok {
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	// Jobs: the changelog, the manifest log, then each filelog.
	jobs := len(paths) + 2
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, runtime.GOMAXPROCS(0))
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for errs[w] == nil {
				i := int(next.Add(1) - 1)
				switch {
				case i >= jobs:
					return
				case i == 0:
					errs[w] = hashAll(r.Changelog(), false)
				case i == 1:
					ml, err := r.Manifestlog()
					if err != nil {
						errs[w] = err
						continue
					}
					errs[w] = hashAll(ml, true)
				default:
					fl, err := r.File(paths[i-2])
					if err != nil {
						errs[w] = err
						continue
					}
					errs[w] = hashAll(fl, false)
					fl.Close()
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// hashAll rebuilds and hashes every revision of rl in order, through
// revlog.EachRevision (each text built in a recycled buffer, as hgfs
// verify's filelog pass does: the floor does not pay for garbage that
// no verify needs to make); with deltasOnly, a revision stored as a
// delta is only decompressed.
func hashAll(rl *revlog.Revlog, deltasOnly bool) error {
	if !deltasOnly {
		return rl.EachRevision(func(_ int, _ []byte, err error) error { return err })
	}
	for i := 0; i < rl.Len(); i++ {
		var err error
		if rl.DeltaParent(i) != revlog.NullRev {
			_, err = rl.RawChunk(i)
		} else {
			_, err = rl.Revision(i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
