//go:build linux

package main

// Clone bundles in object storage: s3Clients concurrent `hgfs clone`s of
// the many-files repository from one hgfs serve whose manifest
// (`hgfs clonebundles refresh`, untimed) points at bundles in SeaweedFS,
// against as many from the same server with ui.clonebundles=false. Both
// sides are Served runs: the CPU table gives the server's CPU per side
// (goal: the bundle side's at most 0.05x the direct side's), and each
// run's log line the bytes the server wrote (wchar of /proc/PID/io: its
// socket writes; it writes no files). The bundle side's clients take the
// stream bundle from SeaweedFS and pull nothing (the bundle is current).
// Check: every clone has the served tip's changelog.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/internal/seaweed"
)

// s3Clients is the number of concurrent clones of the clone bundle case.
const s3Clients = 16

func init() {
	type state struct {
		lifecycle
		env        *Env
		tip        string
		url        string
		pid        int
		work       string
		run        int
		hgfs, peer string
	}
	st := &state{}
	setup := func(ctx context.Context, env *Env) (any, error) {
		st.begin()
		st.once = true
		st.env, st.run = env, 0
		weed, err := seaweed.Find()
		if err != nil {
			return nil, err
		}
		repo, err := largeRepo(ctx, env)
		if err != nil {
			return nil, err
		}
		if st.tip, err = repoTip(env, repo); err != nil {
			return nil, err
		}
		if st.work, err = st.scratch(env, "clonebundles-s3"); err != nil {
			return nil, err
		}
		// The served copy gets the manifest; the cached repository stays
		// as the other cases serve it.
		served := filepath.Join(st.work, "served")
		if out, err := exec.Command("cp", "-al", repo, served).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("cp -al: %v: %s", err, out)
		}
		wdir := filepath.Join(st.work, "seaweedfs")
		if err := os.Mkdir(wdir, 0o755); err != nil {
			return nil, err
		}
		srv, err := seaweed.Start(weed, wdir, 2*time.Minute)
		if err != nil {
			return nil, err
		}
		st.onFinish(srv.Stop)
		start := time.Now()
		refresh := exec.Command(env.Hgfs, "clonebundles", "refresh", "-q", "-R", served, "--to", "s3://bundles/bench",
			"--config", "hgfs.s3-endpoint="+srv.Endpoint)
		refresh.Env = append(append([]string{}, env.HgEnv...), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
		if out, err := refresh.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("hgfs clonebundles refresh: %v\n%s", err, out)
		}
		fmt.Fprintf(os.Stderr, "  hgfs clonebundles refresh of %s into SeaweedFS: %v (untimed)\n", filepath.Base(repo), time.Since(start).Round(time.Millisecond))
		cmd := exec.Command(env.Hgfs, "serve", "-R", served, "-p", "0", "-E", filepath.Join(st.work, "serve.errors"))
		if st.url, err = startServer(env, cmd); err != nil {
			return nil, err
		}
		st.onFinish(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
		st.pid = cmd.Process.Pid
		return st, nil
	}
	side := func(name string, extra ...string) func(env *Env, _ any) *exec.Cmd {
		return func(env *Env, _ any) *exec.Cmd {
			st.run++
			dir := filepath.Join(st.work, fmt.Sprintf("%s-%d", name, st.run))
			if name == "bundles" {
				st.hgfs = dir
			} else {
				st.peer = dir
			}
			if err := exec.Command("sync").Run(); err != nil {
				return failCmd(err)
			}
			argv := append(append([]string{env.Hgfs, "clone", "-q", "-U"}, extra...), st.url, "{dest}")
			c := servedCmd(env, st.pid, s3Clients, dir, argv...)
			c.Env = append(c.Env, servedLogEnv+"="+filepath.Join(st.work, "serve.errors"))
			return c
		}
	}
	register(&Case{
		Name:    fmt.Sprintf("%d concurrent hgfs clones through clone bundles in SeaweedFS vs straight from hgfs serve (many files)", s3Clients),
		Served:  true,
		CPUGoal: 0.05,
		Once:    true,
		Setup:   setup,
		Hgfs:    side("bundles"),
		Peer:    side("direct", "--config", "ui.clonebundles=false"),
		Check: st.check(func(_, _ []byte) error {
			for _, d := range []string{st.hgfs, st.peer} {
				if err := sameChangelogs(d, s3Clients); err != nil {
					return err
				}
				if err := wantTip(st.env, clientDest(d, 0, s3Clients), st.tip); err != nil {
					return err
				}
			}
			return nil
		}),
	})
}
