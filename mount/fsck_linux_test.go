//go:build linux

package mount

import (
	"testing"

	"github.com/hgfs/hgfs/fsnode"
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
