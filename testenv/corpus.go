package testenv

import (
	"os"
	"path/filepath"
	"runtime"
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
