//go:build linux

package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/hgfs/hgfs/internal/hggen"
)

// hgfs verify against hg verify on a large generated repository. Both
// check the same things (every revision of every revlog reconstructed and
// hashed, linkrevs, cross-references, fncache); the final count lines must
// agree.
func init() {
	register(&Case{
		Name: "verify (large repo)",
		Goal: 0.2,
		Setup: func(ctx context.Context, env *Env) (any, error) {
			return cachedRepo(ctx, env, fmt.Sprintf("large-%d", largeFiles), hggen.Large(largeFiles))
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
	})
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}
