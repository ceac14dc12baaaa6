package changegroup

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/testenv"
)

// TestGenerate: changegroups generated from generated repositories, in
// each version, are accepted by hg unbundle into an empty repository,
// pass hg verify and give the source's history.
func TestGenerate(t *testing.T) {
	logT := "{rev}:{node} {p1node} {p2node} {manifest} {branch} [{files}] {extras}\n{desc}\n"
	for _, c := range []struct {
		spec    testenv.Spec
		name    string
		version string
	}{
		{testenv.Small, "small", Version1},
		{testenv.Small, "small", Version3},
		{testenv.NoGeneralDelta, "nogeneraldelta", Version1},
		{testenv.Encodings, "encodings", Version2},
	} {
		t.Run(c.name+"-"+c.version, func(t *testing.T) {
			root := testenv.Generate(t, c.spec)
			r, err := repo.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			dir := t.TempDir()
			path := filepath.Join(dir, "b.hg")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			typ := "HG20"
			if c.version == Version1 {
				typ = "HG10UN"
			}
			w, err := NewBundleWriter(f, BundleOptions{Type: typ, Version: c.version})
			if err != nil {
				t.Fatal(err)
			}
			if err := Generate(context.Background(), r, w); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			newOracle(t, root).check(t, readBundleFile(t, path).groups)
			dst := filepath.Join(dir, "repo")
			testenv.Hg(t, dir, "init", dst)
			testenv.Hg(t, dst, "unbundle", "-q", "--config", "experimental.changegroup3=true", path)
			testenv.Hg(t, dst, "verify", "-q")
			want := string(testenv.Hg(t, root, "log", "--debug", "-r", "all()", "-T", logT))
			if got := string(testenv.Hg(t, dst, "log", "--debug", "-r", "all()", "-T", logT)); got != want {
				t.Errorf("hg log after unbundle differs:\n%s", testenv.Diff("source", want, "unbundled", got))
			}
		})
	}
}
