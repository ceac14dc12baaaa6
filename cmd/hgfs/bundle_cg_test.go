package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestBundleChangegroup writes changegroup bundles with hgfs bundle and
// has hg unbundle apply them: the result must equal hg unbundle of hg's
// own `bundle -a` of the same type (hidden changesets left out).
func TestBundleChangegroup(t *testing.T) {
	t.Parallel()
	testenv.HgPath(t)
	dir := t.TempDir()
	for _, kind := range []string{"fixture", "encodings", "obsolete"} {
		var src string
		switch kind {
		case "fixture":
			fdir := filepath.Join(dir, kind)
			if err := os.Mkdir(fdir, 0o755); err != nil {
				t.Fatal(err)
			}
			src = cloneFixture(t, fdir)
		default:
			src = testenv.Generate(t, generatedKinds[kind])
		}
		for _, typ := range []string{"none-v1", "gzip-v1", "none-v2", "zstd-v2", "none-v2;cg.version=03"} {
			label := kind + "-" + strings.NewReplacer(";", "_", "=", "_").Replace(typ)
			t.Run(label, func(t *testing.T) {
				ours := filepath.Join(dir, label+".hgfs.hg")
				theirs := filepath.Join(dir, label+".hg.hg")
				stdout, stderr, code := hgfsIn(dir, "bundle", "-R", src, "-a", "-t", typ, ours)
				if code != 0 || !strings.HasSuffix(stdout, "changesets found\n") {
					t.Fatalf("hgfs bundle: exit %d\n%s%s", code, stdout, stderr)
				}
				cg3 := []string{"--config", "experimental.changegroup3=true"}
				testenv.Hg(t, src, append(cg3, "bundle", "-q", "-a", "-t", typ, theirs)...)
				a, b := filepath.Join(dir, label+"-a"), filepath.Join(dir, label+"-b")
				testenv.Hg(t, dir, "init", a)
				testenv.Hg(t, dir, "init", b)
				testenv.Hg(t, a, append(cg3, "unbundle", "-q", ours)...)
				testenv.Hg(t, b, append(cg3, "unbundle", "-q", theirs)...)
				if w, g := repoState(t, b, false), repoState(t, a, true); w != g {
					t.Errorf("unbundled hgfs bundle differs:\n%s", testenv.Diff("hg", w, "hgfs", g))
				}
			})
		}
	}
}
