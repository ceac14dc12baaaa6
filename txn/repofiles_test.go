package txn

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestUndoFilesMatchHg compares the undo.* files of a transaction we
// commit with those hg leaves after its own transaction on the same
// repository state (`hg bookmark`, which changes nothing a rollback
// reads but the bookmarks).
func TestUndoFilesMatchHg(t *testing.T) {
	p := commitPair(t, testenv.Small)
	ours := testenv.CopyRepo(t, p.b)
	theirs := testenv.CopyRepo(t, p.b)
	n := changelogLen(t, ours)
	tx, err := Begin(ours, storeDirOf(ours), "bookmark", n)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, theirs, "bookmark", "-r", "0", "zzz")
	for _, f := range []string{".hg/undo.desc", ".hg/undo.branch", ".hg/undo.bookmarks", ".hg/undo.dirstate", ".hg/store/undo.phaseroots", ".hg/store/undo"} {
		a, errA := os.ReadFile(filepath.Join(theirs, f))
		b, errB := os.ReadFile(filepath.Join(ours, f))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s: hg %q (%v), ours %q (%v)", f, a, errA, b, errB)
		}
	}
	if got := fmt.Sprint(exists(filepath.Join(ours, ".hg/journal.desc")), exists(filepath.Join(ours, ".hg/store/journal"))); got != "false false" {
		t.Errorf("journal files left: %s", got)
	}
}

// TestDirstateV2 checks the dirstate-v2 backup (docket and data file)
// and its restore on Abort.
func TestDirstateV2(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "r")
	// hg 6.3 without its Rust extensions reads dirstate-v2 only when allowed.
	testenv.Hg(t, dir, "init", "--config", "format.use-dirstate-v2=true", "--config", "storage.dirstate-v2.slow-path=allow", "r")
	if err := os.WriteFile(filepath.Join(root, ".hg", "hgrc"), []byte("[storage]\ndirstate-v2.slow-path = allow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "a"), []byte("a\n"), 0o644)
	testenv.Hg(t, root, "commit", "-q", "-A", "-m", "a", "-d", "0 0")
	docket, err := os.ReadFile(filepath.Join(root, ".hg", "dirstate"))
	if err != nil {
		t.Fatal(err)
	}
	data, ok := dirstateV2DataFile(docket)
	if !ok {
		t.Fatalf("no data file in docket %q", docket)
	}
	want, err := os.ReadFile(filepath.Join(root, ".hg", data))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := Begin(root, storeDirOf(root), "test", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, ".hg", "journal.dirstate.v2-data")); err != nil || string(got) != string(want) {
		t.Fatalf("journal.dirstate.v2-data: %v", err)
	}
	if err := tx.Abort(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"journal.dirstate", "journal.dirstate.v2-data"} {
		if exists(filepath.Join(root, ".hg", f)) {
			t.Errorf("%s left after Abort", f)
		}
	}
	if out := testenv.Hg(t, root, "status"); len(out) != 0 {
		t.Errorf("hg status after Abort: %q", out)
	}
	tx, err = Begin(root, storeDirOf(root), "test", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(root, ".hg", "undo.dirstate.v2-data")) {
		t.Error("no undo.dirstate.v2-data after Close")
	}
	hgVerify(t, root)
}

func TestDirstateV2DataFile(t *testing.T) {
	for _, bad := range [][]byte{nil, []byte("dirstate-v2\n"), make([]byte, 200)} {
		if _, ok := dirstateV2DataFile(bad); ok {
			t.Errorf("accepted %q", bad)
		}
	}
	d := append([]byte("dirstate-v2\n"), make([]byte, 32+32+44+4)...)
	if _, ok := dirstateV2DataFile(append(d, 4, '.', '.', '/', 'x')); ok {
		t.Error("accepted a uuid with a slash")
	}
	if name, ok := dirstateV2DataFile(append(d, 3, 'a', 'b', 'c')); !ok || name != "dirstate.abc" {
		t.Errorf("got %q %v", name, ok)
	}
}
