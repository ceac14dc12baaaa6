//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hgfs/hgfs/internal/hggen"
)

// largeFiles is the size of the large repository (-files).
var largeFiles = 20000

// corpusDir holds the workspace's real-world data (-corpus): beside the
// project's root, from which make bench runs.
var corpusDir = filepath.Join("..", "shared", "corpus")

// corpusBundle is the real-history bundle: Mercurial's own first 2,971
// changesets (hg bundle -a -t zstd-v2), absolute.
func corpusBundle() (string, error) {
	p, err := filepath.Abs(filepath.Join(corpusDir, "mercurial-history-2971.hg"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the real-history corpus is missing (-corpus): %w", err)
	}
	return p, nil
}

// historyRepo is the real-history bundle unbundled by hg into a new
// repository, cached.
func historyRepo(ctx context.Context, env *Env) (string, error) {
	bundle, err := corpusBundle()
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(bundle)
	if err != nil {
		return "", err
	}
	return cachedPath(env, "history-2971", fmt.Sprintf("v1 %d %d", fi.Size(), fi.ModTime().Unix()), func(dir string) error {
		fmt.Fprintf(os.Stderr, "  unbundling the real-history corpus (once; cached in %s)\n", env.Cache)
		if err := runQuiet(exec.Command(env.Hg, "init", dir), env); err != nil {
			return err
		}
		return runQuiet(exec.Command(env.Hg, "-R", dir, "unbundle", "-q", bundle), env)
	})
}

// largeBundle is `hg bundle -a -t zstd-v2` of the large repository, cached.
func largeBundle(ctx context.Context, env *Env) (string, error) {
	repo, err := largeRepo(ctx, env)
	if err != nil {
		return "", err
	}
	key := readString(filepath.Join(env.Cache, filepath.Base(repo)+".done"))
	return cachedPath(env, filepath.Base(repo)+".zstd-v2.hg", key, func(p string) error {
		return runQuiet(exec.Command(env.Hg, "-R", repo, "bundle", "-q", "-a", "-t", "zstd-v2", p), env)
	})
}

// historyBundle is the real-history bundle (as hg bundle -a -t zstd-v2
// makes it).
func historyBundle(context.Context, *Env) (string, error) { return corpusBundle() }

// cachedRepo returns a repository generated from spec under the cache
// directory, generating it on first use. A marker file written last tells
// a complete repository from one interrupted mid-generation.
func cachedRepo(ctx context.Context, env *Env, name string, spec hggen.Spec) (string, error) {
	dir := filepath.Join(env.Cache, name)
	done := filepath.Join(env.Cache, name+".done")
	if want := spec.Key(); readString(done) == want {
		return dir, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "  generating %s (once; cached in %s)\n", name, env.Cache)
	if err := hggen.GenerateDir(dir, spec); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return dir, os.WriteFile(done, []byte(spec.Key()), 0o644)
}

func readString(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
