package exchange

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
)

// Regression tests for what the unbundle fuzz targets and
// TestUnbundleMutations found, each on a variant of a seed bundle.

// TestUnbundleFlagWithoutProcessor: a cg3 delta flagged ellipsis
// (narrow) or extstored (lfs) is refused with hg's words ("missing
// processor for flag"): such a revision's text is not checked against
// its node, and hg reads it back only through the extension's
// processor, so hg verify rejected the repository hgfs had committed.
// hg refuses the flag where it builds the revision's text and takes it
// where it stores the delta as it came, into a repository its verify
// rejects in the same words; hgfs builds every text. A flag on a
// revision already present is not looked at (hg skips the revision
// before). The old code committed every case but the unknown flag.
func TestUnbundleFlagWithoutProcessor(t *testing.T) {
	testenv.HgPath(t)
	seed := decodeBundle(t, readSeed(t, "small-none-v2-cg3.hg"))
	for _, tc := range []struct {
		name  string
		group int // 0 changelog, 1 manifest, 2... files
		flags uint16
		want  string
	}{
		{"ellipsis-file", 2, revlog.FlagEllipsis, "missing processor for flag '0x4000'"},
		{"extstored-manifest", 1, revlog.FlagExtStored, "missing processor for flag '0x2000'"},
		{"both-changelog", 0, revlog.FlagEllipsis | revlog.FlagExtStored, "missing processor for flag '0x4000'"},
		{"unknown-first", 2, revlog.FlagEllipsis | 1, "incompatible revision flag '0x1'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := seed.clone()
			g := m.groups[tc.group]
			g.deltas[len(g.deltas)-1].Flags = tc.flags
			data := m.encodeBundle(t)
			root, before := newRepo(t, "")
			err := unbundleBytes(root, data, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			checkApplied(t, root, before, err)

			file := filepath.Join(t.TempDir(), "flagged.hg")
			if err := os.WriteFile(file, data, 0o666); err != nil {
				t.Fatal(err)
			}
			for _, hg := range testenv.Mercurials(t) {
				hgRoot, _ := newRepo(t, "")
				_, stderr, err := hg.Result(t, hgRoot, "unbundle", file)
				switch {
				case tc.flags&^revlog.KnownRevisionFlags != 0:
					// hg does not check unknown flags on a delta it
					// stores as it came, and fails writing the index
					// entry ("unknown revlog index flags").
					if err == nil {
						t.Errorf("%s applied an unknown flag", hg.Name)
					}
				case err == nil:
					_, stderr, err = hg.Result(t, hgRoot, "verify", "-q")
					if err == nil || !strings.Contains(string(stderr), tc.want) {
						t.Errorf("%s applied the bundle; hg verify: %v %s", hg.Name, err, stderr)
					}
				case !strings.Contains(string(stderr), "abort: "+tc.want):
					t.Errorf("%s: %v %s", hg.Name, err, stderr)
				}
			}

			// The same bundle again onto the repository that has every
			// revision: nothing is new, nothing is refused.
			root, _ = newRepo(t, "")
			if err := unbundleBytes(root, readSeed(t, "small-none-v2-cg3.hg"), Options{}); err != nil {
				t.Fatal(err)
			}
			if err := unbundleBytes(root, data, Options{}); err != nil {
				t.Errorf("flags on revisions already present: %v", err)
			}
		})
	}
}
