package fsnode

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}

// TestHgRepoThroughCache: a repository real hg made goes into a cache
// through the sink and comes back out through the io/fs view; hg must
// verify the copy and log it exactly as the original.
func TestHgRepoThroughCache(t *testing.T) {
	repo := testenv.Generate(t, testenv.Encodings)
	f := newTestFS(t, Options{})
	s := f.NewSink(bg)
	err := filepath.WalkDir(filepath.Join(repo, ".hg"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, p)
		w, err := s.Create(filepath.ToSlash(rel), int64(len(data)))
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
		return w.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	err = fs.WalkDir(f.FS(), ".hg", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(out, p), 0o755)
		}
		data, err := fs.ReadFile(f.FS(), p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, p), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, out, "verify")
	want := testenv.Hg(t, repo, "log", "--debug")
	if got := testenv.Hg(t, out, "log", "--debug"); !bytes.Equal(got, want) {
		t.Fatal(testenv.Diff("original", string(want), "through the cache", string(got)))
	}
}
