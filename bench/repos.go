//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hgfs/hgfs/internal/hggen"
)

// largeFiles is the size of the large repository (-files).
var largeFiles = 20000

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
