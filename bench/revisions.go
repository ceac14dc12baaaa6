//go:build linux

package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hgfs/hgfs/internal/hggen"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// Reconstructing every revision of a filelog with a long delta chain.
//
// Fair comparison: both sides are one process that opens the repository,
// reads every revision of chain.txt's filelog in order through the
// ordinary revlog API (hg: filelog.rawdata, which checks each hash; hgfs:
// revlog.Revision, which does too) and prints the total bytes, so start-up
// costs are included on both sides and neither can skip work. The hgfs side
// is this bench binary re-executed in a child mode, so its peak RSS is
// measured on its own; the hg side is a small extension (hgbench.py).

//go:embed hgbench.py
var hgBenchExt []byte

const childFlag = "-child-revisions"

const chainRevisions = 3000

func init() {
	register(&Case{
		Name: "read all revisions (long chain)",
		Goal: 0.5,
		Setup: func(ctx context.Context, env *Env) (any, error) {
			spec := hggen.Spec{Files: 1, LongChain: chainRevisions, NoCheckout: true, Seed: 2}
			dir, err := cachedRepo(ctx, env, fmt.Sprintf("chain-%d", chainRevisions), spec)
			if err != nil {
				return nil, err
			}
			_, err = hgBenchExtPath(env)
			return dir, err
		},
		Hgfs: func(env *Env, data any) *exec.Cmd {
			return exec.Command(env.Self, childFlag, data.(string), "chain.txt")
		},
		Peer: func(env *Env, data any) *exec.Cmd {
			c := exec.Command(env.Hg, "-R", data.(string), "--config", "extensions.hgbench="+filepath.Join(env.Cache, "hgbench.py"),
				"benchrevisions", "chain.txt")
			c.Env = env.HgEnv
			return c
		},
		Check: func(h, p []byte) error {
			if string(h) != string(p) {
				return fmt.Errorf("hgfs %q, hg %q", h, p)
			}
			return nil
		},
	})
}

// runChild reads every revision of a filelog: args are the repository
// root and the tracked path.
func runChild(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bench -child-revisions REPO FILE")
		return 2
	}
	st, err := store.Open(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rl, err := revlog.Open(st.FS(), st.FilelogIndex(args[1]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer rl.Close()
	var total int64
	for rev := 0; rev < rl.Len(); rev++ {
		text, err := rl.Revision(rev)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		total += int64(len(text))
	}
	fmt.Printf("%d revisions, %d bytes\n", rl.Len(), total)
	return 0
}
