//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/hgfs/hgfs/mount"
)

// Compaction's cost (issue 21): the same write workload through two
// mounts, one with background compaction ([hgfs] compact-idle short, so
// that it starts in the workload's pauses and goes on into its next
// writes, at the default rate bound) and one without (hgfs.compact=false).
// The workload writes a -compact-mib file, deletes the previous one and
// rewrites a small file, in compactRounds rounds with a short pause
// between them: every round leaves compact-mib dead bytes. Check logs each
// side's live and dead bytes after its runs.

var compactMiB = flag.Int("compact-mib", 64, "size of the file each round of the compaction case writes and deletes")

const compactRounds = 8

func init() { registerCompactCase() }

func registerCompactCase() {
	type compactState struct {
		lifecycle
		on, off struct{ cache, mnt string }
	}
	st := &compactState{}
	workload := func(dir string) *exec.Cmd {
		const script = `d=$1; mib=$2; rounds=$3
for i in $(seq 1 "$rounds"); do
	head -c "${mib}M" /dev/zero > "$d/big$i" || exit 1
	rm -f "$d/big$((i-1))"
	head -c 1M /dev/zero > "$d/small" || exit 1
	sleep 0.15
done
rm -f "$d/big$rounds"
echo done`
		return exec.Command("bash", "-c", script, "bash", dir, strconv.Itoa(*compactMiB), strconv.Itoa(compactRounds))
	}
	register(&Case{Name: "write+delete through a mount, compaction on vs off",
		Setup: func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			work, err := st.scratch(env, "compact")
			if err != nil {
				return nil, err
			}
			for _, side := range []struct {
				s    *struct{ cache, mnt string }
				name string
				conf string
			}{{&st.on, "on", "hgfs.compact-idle=100ms"}, {&st.off, "off", "hgfs.compact=false"}} {
				side.s.cache = filepath.Join(work, "cache-"+side.name)
				side.s.mnt = filepath.Join(work, "mnt-"+side.name)
				if err := os.MkdirAll(side.s.mnt, 0o755); err != nil {
					return nil, err
				}
				if err := runQuiet(hgfsCmd(env, "mount", "--create", "--config", side.conf, side.s.cache, side.s.mnt), env); err != nil {
					return nil, err
				}
				mnt := side.s.mnt
				st.onFinish(func() { _ = unmountHgfs(env, mnt) })
			}
			return st, nil
		},
		Hgfs: func(env *Env, d any) *exec.Cmd { return guarded(env, workload(st.on.mnt), st.on.mnt, st.off.mnt) },
		Peer: func(env *Env, d any) *exec.Cmd { return guarded(env, workload(st.off.mnt), st.on.mnt, st.off.mnt) },
		Check: st.check(func(h, p []byte) error {
			for _, side := range []struct{ name, mnt string }{{"on", st.on.mnt}, {"off", st.off.mnt}} {
				info, err := mount.ReadInfo(side.mnt)
				if err != nil {
					return err
				}
				if info.Stats == nil {
					return fmt.Errorf("%s: no cache figures in its stats", side.mnt)
				}
				s := info.Stats
				fmt.Fprintf(os.Stderr, "    compaction %s: %.1f MiB live, %.1f MiB dead in %d data files after the runs (%d compactions)\n",
					side.name, float64(s.LiveBytes)/(1<<20), float64(s.DeadBytes)/(1<<20), s.DataFiles, s.Compactions)
			}
			if string(h) != string(p) {
				return fmt.Errorf("workload output %q with compaction, %q without", h, p)
			}
			return nil
		})})
}
