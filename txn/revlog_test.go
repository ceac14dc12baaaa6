package txn

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

// RevlogJournal is the journal revlog writers are given.
var (
	_ revlog.Journal        = (*RevlogJournal)(nil)
	_ revlog.JournalFlusher = (*RevlogJournal)(nil)
)

// writeWithRevlog appends a revision to the nearly full inline filelog
// of splitPair's A with the real revlog.Writer (which splits it) and
// starts a new filelog, all in tx; the fncache is rewritten as exchange
// would.
func writeWithRevlog(tx *Tx) error {
	opt := revlog.WriterOptions{Compression: "zstd", GeneralDelta: true, SparseRevlog: true}
	opt.Journal = tx.RevlogJournal("data/big.bin.i")
	w, err := revlog.OpenWriter(tx.StoreDir(), "data/big.bin.i", opt)
	if err != nil {
		return err
	}
	text := make([]byte, 40_000)
	rand.New(rand.NewSource(7)).Read(text)
	if _, _, err := w.AddRevision(text, w.Node(w.Len()-1), revlog.NullNode, 3, 0); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	opt.Journal = tx.RevlogJournal("data/New File.txt.i")
	nw, err := revlog.OpenWriter(tx.StoreDir(), store.HybridEncode("data/New File.txt.i", true), opt)
	if err != nil {
		return err
	}
	if _, _, err := nw.AddRevision([]byte("new\n"), revlog.NullNode, revlog.NullNode, 3, 0); err != nil {
		return err
	}
	if err := nw.Close(); err != nil {
		return err
	}
	fn, err := os.ReadFile(filepath.Join(tx.StoreDir(), "fncache"))
	if err != nil {
		return err
	}
	if !strings.Contains(string(fn), "data/big.bin.d\n") {
		fn = append(fn, "data/big.bin.d\n"...)
	}
	return tx.WriteFile("fncache", append(fn, "data/New File.txt.i\n"...))
}

// writerChild is the crash child for TestRevlogWriter: the writes, then
// SIGKILL before Close.
func writerChild(root string) error {
	tx, err := Begin(root, storeDirOf(root), "unbundle", 3)
	if err != nil {
		return err
	}
	if err := writeWithRevlog(tx); err != nil {
		return err
	}
	killSelf()
	return nil
}

// TestRevlogWriter rolls back what the real revlog.Writer wrote through
// a Tx (appends, an inline-to-split conversion, a new filelog): by
// Abort, and by Recover or `hg recover` after a SIGKILL.
func TestRevlogWriter(t *testing.T) {
	p := splitPair(t)
	wantLog := string(testenv.Hg(t, p.a, "log", "--debug"))
	check := func(t *testing.T, root string) {
		t.Helper()
		hgVerify(t, root)
		if got := string(testenv.Hg(t, root, "log", "--debug")); got != wantLog {
			t.Errorf("hg log --debug:\n%s", testenv.Diff("A", wantLog, "got", got))
		}
		if exists(filepath.Join(root, ".hg/store/data/_new _file.txt.i")) {
			t.Error("the new filelog survived")
		}
	}
	t.Run("abort", func(t *testing.T) {
		root := testenv.CopyRepo(t, p.a)
		tx, err := Begin(root, storeDirOf(root), "unbundle", 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeWithRevlog(tx); err != nil {
			t.Fatal(err)
		}
		if !exists(filepath.Join(root, ".hg/store/data/big.bin.d")) || !exists(filepath.Join(root, ".hg/store/data/_new _file.txt.i")) {
			t.Fatal("the writer did not split big.bin or create the new filelog")
		}
		if err := tx.Abort(); err != nil {
			t.Fatal(err)
		}
		check(t, root)
	})
	for _, by := range []string{"hgfs", "hg"} {
		t.Run("crash/"+by, func(t *testing.T) {
			root := testenv.CopyRepo(t, p.a)
			runCrashChild(t, root, "writer", 1)
			recoverBy(t, by, root)
			check(t, root)
		})
	}
}
