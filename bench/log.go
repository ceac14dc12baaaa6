//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
)

// hgfs log against hg log on the real history: a template over every
// changeset, a revset that reads every changeset, and the graph. The
// outputs must be identical.
func init() {
	for _, lc := range []struct {
		name string
		args []string
	}{
		{"log -T template (real history)", []string{"log", "-T", "{rev}:{node|short} {author|user} {date|isodate} {desc|firstline}\n"}},
		{"log -r revset (real history)", []string{"log", "-q", "-r", "keyword(merge) and not file('re:^tests/') or heads(all())"}},
		{"log -G (real history)", []string{"log", "-G"}},
	} {
		register(&Case{
			Name: lc.name,
			Goal: 0.2,
			Setup: func(ctx context.Context, env *Env) (any, error) {
				return historyRepo(ctx, env)
			},
			Hgfs: func(env *Env, data any) *exec.Cmd {
				c := exec.Command(env.Hgfs, append([]string{"-R", data.(string)}, lc.args...)...)
				c.Env = env.HgEnv
				return c
			},
			Peer: func(env *Env, data any) *exec.Cmd {
				c := exec.Command(env.Hg, append([]string{"-R", data.(string)}, lc.args...)...)
				c.Env = env.HgEnv
				return c
			},
			Check: func(h, p []byte) error {
				if !bytes.Equal(h, p) {
					return fmt.Errorf("outputs differ (hgfs %d bytes, hg %d bytes)", len(h), len(p))
				}
				return nil
			},
		})
	}
}
