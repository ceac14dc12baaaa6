package verify_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hgfs/hgfs/internal/hggen"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/testenv"
	"github.com/hgfs/hgfs/verify"
)

// run verifies the repository at dir and returns its findings.
func run(t *testing.T, dir string, opt verify.Options) (verify.Result, []string) {
	t.Helper()
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var lines []string
	opt.Warn = func(l string) { lines = append(lines, l) }
	res, err := verify.Repo(context.Background(), r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, lines
}

// TestAheadSameFindings: reading the filelogs ahead (Options.Ahead)
// changes nothing in what verify finds or in what order, on a clean
// long history and on copies damaged where each phase looks: a filelog
// whose node does not match, a missing filelog, an fncache without an
// entry. --full finds the same on a clean repository.
func TestAheadSameFindings(t *testing.T) {
	src := testenv.Generate(t, hggen.Evolution(200))
	damage := map[string]func(t *testing.T, store string){
		"clean": func(*testing.T, string) {},
		"wrong node": func(t *testing.T, store string) {
			flip(t, filepath.Join(store, "data", "f", "000", "file0007.txt.i"), 40)
		},
		"missing filelog": func(t *testing.T, store string) {
			if err := os.Remove(filepath.Join(store, "data", "f", "000", "file0003.txt.i")); err != nil {
				t.Fatal(err)
			}
		},
		"fncache": func(t *testing.T, store string) {
			p := filepath.Join(store, "fncache")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.Replace(b, []byte("data/README.i\n"), nil, 1)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			dir := testenv.CopyRepo(t, src)
			f(t, filepath.Join(dir, ".hg", "store"))
			plain, plainLines := run(t, dir, verify.Options{})
			ahead, aheadLines := run(t, dir, verify.Options{Ahead: true})
			full, fullLines := run(t, dir, verify.Options{Ahead: true, Full: true})
			if !reflect.DeepEqual(plain, ahead) || !reflect.DeepEqual(plainLines, aheadLines) {
				t.Errorf("ahead differs:\n%+v\n%q\nplain:\n%+v\n%q", ahead, aheadLines, plain, plainLines)
			}
			if !reflect.DeepEqual(plain, full) || !reflect.DeepEqual(plainLines, fullLines) {
				t.Errorf("--full differs on a repository whose manifests are sound:\n%+v\n%q\nplain:\n%+v\n%q", full, fullLines, plain, plainLines)
			}
			if plain.Changesets != 201 {
				t.Errorf("%d changesets, want 201", plain.Changesets)
			}
			if (name == "clean") != (plain.Errors+plain.Warnings == 0) {
				t.Errorf("%d errors, %d warnings: %q", plain.Errors, plain.Warnings, plainLines)
			}
		})
	}
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x5a
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
