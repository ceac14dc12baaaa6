package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Corpus returns the path of a file of the workspace's real-world test
// data (`../shared/corpus/` beside the project's root; see its README),
// such as "mercurial-history-2971.hg": real history that no generator
// here wrote. Where the directory is absent (a checkout outside the
// workspace) the test skips and says why; on CI it fails.
func Corpus(t testing.TB, name string) string {
	t.Helper()
	dir := corpusDir()
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "the real-history corpus ("+p+")")
	}
	return p
}

// CorpusHistory is Mercurial's own first 2,971 changesets as a zstd-v2
// changegroup bundle.
const CorpusHistory = "mercurial-history-2971.hg"

// corpusDir is ../shared/corpus from the module root (this file's
// package's parent), or $HGFS_CORPUS.
func corpusDir() string {
	if d := os.Getenv("HGFS_CORPUS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	return filepath.Join(filepath.Dir(root), "shared", "corpus")
}

// CorpusRepo returns a repository holding the corpus bundle name, as
// `hg unbundle` (the hg on PATH) writes it into a new repository of the
// default format: every changeset draft, no bookmarks. It is made once
// per test process and shared, as Generate's repositories are: tests
// must not modify it (CopyRepo makes a private copy); RemoveGenerated
// deletes it.
func CorpusRepo(t testing.TB, name string) string {
	t.Helper()
	bundle := Corpus(t, name)
	hg := HgPath(t)
	genMu.Lock()
	e := genCache["corpus:"+name]
	if e == nil {
		e = &genEntry{}
		genCache["corpus:"+name] = e
	}
	genMu.Unlock()
	e.once.Do(func() {
		base, err := genBase()
		if err != nil {
			e.err = err
			return
		}
		if e.dir, err = os.MkdirTemp(base, "corpus-"); err != nil {
			e.err = err
			return
		}
		for _, args := range [][]string{{"init", e.dir}, {"-R", e.dir, "unbundle", "-q", bundle}} {
			cmd := exec.Command(hg, args...)
			cmd.Env = HgEnv()
			if out, err := cmd.CombinedOutput(); err != nil {
				e.err = fmt.Errorf("hg %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if e.err != nil {
		t.Fatalf("corpus repository %s: %v", name, e.err)
	}
	return e.dir
}
