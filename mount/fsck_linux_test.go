//go:build linux

package mount

import (
	"os"
	"testing"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/fsnode/posixtest"
)

// checkFsck runs fsnode's consistency check on a closed cache, as bbolt's
// tests check every database at cleanup.
func checkFsck(t testing.TB, dir string) {
	t.Helper()
	rep, err := fsnode.Fsck(dir, false)
	if err != nil {
		t.Errorf("fsck %s: %v", dir, err)
		return
	}
	if !rep.OK() {
		t.Errorf("fsck %s:\n%s", dir, rep)
	}
}

// TestConformance runs fsnode's POSIX conformance suite through the
// kernel against one shared mount, each case in its own directory.
func TestConformance(t *testing.T) {
	m := newMount(t)
	posixtest.Run(t, func(t *testing.T) posixtest.FS {
		dir := m.path(posixtest.DirName(t))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return posixtest.OS(dir)
	})
}
