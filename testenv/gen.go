package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/internal/hggen"
)

// Repository generation lives in internal/hggen (the benchmark harness
// uses it too); these names keep tests short.

type (
	Spec   = hggen.Spec
	Layout = hggen.Layout
)

const (
	LayoutDefault     = hggen.LayoutDefault
	LayoutNoDotencode = hggen.LayoutNoDotencode
	LayoutNoFncache   = hggen.LayoutNoFncache
	LayoutNoStore     = hggen.LayoutNoStore
)

var (
	Small          = hggen.Small
	Encodings      = hggen.Encodings
	Zlib           = hggen.Zlib
	NoCompression  = hggen.NoCompression
	NoGeneralDelta = hggen.NoGeneralDelta
	Obsolete       = hggen.Obsolete
	LongChain      = hggen.LongChain
	Rich           = hggen.Rich
	EncodingNames  = hggen.EncodingNames
)

// OldLayouts returns Encodings in each older store layout.
func OldLayouts() []Spec { return hggen.OldLayouts() }

// Large is a repository of n files and a short history, for benchmarks.
func Large(n int) Spec { return hggen.Large(n) }

// GenerateDir creates the repository described by spec at dir.
func GenerateDir(dir string, spec Spec) error { return hggen.GenerateDir(dir, spec) }

// Generate returns the root of a repository generated from spec, shared by
// every test of the process that asks for the same spec. Tests must not
// modify it; use CopyRepo for a private copy. Call RemoveGenerated from
// TestMain to delete the generated repositories.
func Generate(t testing.TB, spec Spec) string {
	t.Helper()
	HgPath(t)
	key := spec.Key()
	genMu.Lock()
	e := genCache[key]
	if e == nil {
		e = &genEntry{}
		genCache[key] = e
	}
	genMu.Unlock()
	e.once.Do(func() {
		base, err := genBase()
		if err != nil {
			e.err = err
			return
		}
		e.dir, err = os.MkdirTemp(base, "repo-")
		if err != nil {
			e.err = err
			return
		}
		e.err = GenerateDir(e.dir, spec)
	})
	if e.err != nil {
		t.Fatalf("generating repository %s: %v", key, e.err)
	}
	return e.dir
}

// RemoveGenerated deletes what this process left in the temporary
// directory for its tests to share: the repositories Generate made and
// the binaries Hgfs and UseS3Helper built. A test package that uses
// either calls it from TestMain after m.Run.
func RemoveGenerated() {
	genMu.Lock()
	defer genMu.Unlock()
	if genDir != "" {
		os.RemoveAll(genDir)
	}
	for _, c := range []*command{&hgfsBuild, &s3HelperBuild} {
		if c.bin != "" {
			os.RemoveAll(filepath.Dir(c.bin))
		}
	}
}

type genEntry struct {
	once sync.Once
	dir  string
	err  error
}

func genBase() (string, error) {
	genMu.Lock()
	defer genMu.Unlock()
	if genDir == "" {
		d, err := os.MkdirTemp("", "hgfs-testrepos-")
		if err != nil {
			return "", err
		}
		genDir = d
	}
	return genDir, nil
}

// CopyRepo copies the repository at src into a fresh temporary directory
// (for tests that corrupt or modify it) and returns the copy's root.
func CopyRepo(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
	return dst
}

// CopyFiles copies the files directly in directory from into directory
// to (a cache: its index and data files), for tests that damage a copy.
func CopyFiles(t testing.TB, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	genMu    sync.Mutex
	genCache = map[string]*genEntry{}
	genDir   string
)
