package txn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// specs are the store layouts the transaction tests cover: hg's default
// (fncache, dotencode) and a store-less repository (store = .hg).
func specs() map[string]testenv.Spec {
	nostore := testenv.Encodings
	nostore.Layout = testenv.LayoutNoStore
	return map[string]testenv.Spec{"default": testenv.Small, "nostore": nostore}
}

func changelogLen(t *testing.T, root string) int {
	t.Helper()
	var n int
	fmt.Sscan(string(testenv.Hg(t, root, "log", "--hidden", "-r", "tip", "-T", "{rev}")), &n)
	return n + 1
}

func TestAbortRestoresRepository(t *testing.T) {
	for name, spec := range specs() {
		t.Run(name, func(t *testing.T) {
			p := commitPair(t, spec)
			before, _ := snapshot(p.a)
			root := testenv.CopyRepo(t, p.a)
			tx, err := Begin(root, storeDirOf(root), "unbundle", changelogLen(t, root))
			if err != nil {
				t.Fatal(err)
			}
			var msgs strings.Builder
			tx.Report = func(m string) { msgs.WriteString(m) }
			apply(t, tx, root, p.b)
			hashed := false
			for _, e := range tx.Entries() {
				hashed = hashed || strings.HasPrefix(e.Name, "data/txn new/Long-name")
			}
			if !hashed {
				t.Fatalf("no journal entry for the long new file: %v", tx.Entries())
			}
			if err := tx.Abort(); err != nil {
				t.Fatal(err)
			}
			if got, want := msgs.String(), "transaction abort!\nrollback completed\n"; got != want {
				t.Errorf("abort reported %q, want %q", got, want)
			}
			sameState(t, root, before, "after Abort")
			for _, f := range []string{"journal", "journal.backupfiles", "journal.backup.fncache", "journal.backup.phaseroots"} {
				if exists(filepath.Join(storeDirOf(root), f)) {
					t.Errorf("%s left after Abort", f)
				}
			}
			for _, f := range []string{"journal.backup.bookmarks", "journal.desc", "journal.branch", "journal.bookmarks", "journal.dirstate"} {
				if exists(filepath.Join(root, ".hg", f)) {
					t.Errorf("%s left after Abort", f)
				}
			}
			if exists(filepath.Join(storeDirOf(root), "journal.phaseroots")) {
				t.Error("journal.phaseroots left after Abort")
			}
			hgVerify(t, root)
			if err := tx.Abort(); !errors.Is(err, ErrDone) {
				t.Errorf("second Abort: %v, want ErrDone", err)
			}
			// A new transaction may start.
			tx, err = Begin(root, storeDirOf(root), "again", 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Abort(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCloseThenHgRollback commits a transaction that turns A into B and
// checks hg sees B, then that `hg rollback` (reading the undo files
// Close left) brings back A.
func TestCloseThenHgRollback(t *testing.T) {
	for name, spec := range specs() {
		t.Run(name, func(t *testing.T) {
			p := commitPair(t, spec)
			before, _ := snapshot(p.a)
			after, _ := snapshot(p.b)
			root := testenv.CopyRepo(t, p.a)
			n := changelogLen(t, root)
			tx, err := Begin(root, storeDirOf(root), "unbundle", n)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, tx, root, p.b)
			if err := tx.Close(); err != nil {
				t.Fatal(err)
			}
			sameState(t, root, after, "after Close")
			hgVerify(t, root)
			want := testenv.Hg(t, p.b, "log", "--hidden", "--debug", "-r", "tip")
			if got := testenv.Hg(t, root, "log", "--hidden", "--debug", "-r", "tip"); string(got) != string(want) {
				t.Errorf("hg log after Close:\n%s", testenv.Diff("B", string(want), "got", string(got)))
			}
			sd := storeDirOf(root)
			for _, f := range []string{"journal", "journal.backupfiles", "journal.phaseroots", "journal.backup.fncache"} {
				if exists(filepath.Join(sd, f)) {
					t.Errorf("%s left after Close", f)
				}
			}
			for _, f := range []string{filepath.Join(sd, "undo"), filepath.Join(sd, "undo.backupfiles"), filepath.Join(sd, "undo.phaseroots"),
				filepath.Join(root, ".hg", "undo.desc"), filepath.Join(root, ".hg", "undo.bookmarks"), filepath.Join(root, ".hg", "undo.branch")} {
				if !exists(f) {
					t.Errorf("%s missing after Close", f)
				}
			}
			if desc, _ := os.ReadFile(filepath.Join(root, ".hg", "undo.desc")); string(desc) != fmt.Sprintf("%d\nunbundle\n", n) {
				t.Errorf("undo.desc = %q", desc)
			}
			out := testenv.Hg(t, root, "rollback")
			if want := fmt.Sprintf("repository tip rolled back to revision %d (undo unbundle)\n", n-1); string(out) != want {
				t.Errorf("hg rollback said %q, want %q", out, want)
			}
			sameState(t, root, before, "after hg rollback")
			hgVerify(t, root)
		})
	}
}

// TestCrashRecover kills a child process (SIGKILL) at several points of
// a transaction, then rolls back with Recover or with `hg recover`.
func TestCrashRecover(t *testing.T) {
	for name, spec := range specs() {
		t.Run(name, func(t *testing.T) {
			p := commitPair(t, spec)
			before, _ := snapshot(p.a)
			total := totalEvents(t, p.a, p.b)
			points := []int{2, total / 2, total - 1, total}
			for i, at := range points {
				for j, by := range []string{"hgfs", "hg"} {
					if i%2 != j && at != total {
						continue // both recoverers at the end; alternate elsewhere
					}
					t.Run(fmt.Sprintf("event%d/%s", at, by), func(t *testing.T) {
						root := testenv.CopyRepo(t, p.a)
						runCrashChild(t, root, p.b, at)
						if !exists(filepath.Join(storeDirOf(root), "journal")) {
							t.Fatal("no journal after the crash")
						}
						if at == total {
							// hg itself sees the abandoned transaction.
							_, errOut, err := testenv.HgResult(t, root, "bookmark", "other")
							if err == nil || !strings.Contains(string(errOut), "abort: abandoned transaction found\n(run 'hg recover' to clean up transaction)") {
								t.Errorf("hg bookmark with our journal: %v %s", err, errOut)
							}
						}
						recoverBy(t, by, root)
						sameState(t, root, before, "after recover")
						hgVerify(t, root)
					})
				}
			}
		})
	}
}

func recoverBy(t *testing.T, by, root string) {
	t.Helper()
	if by == "hg" {
		out, errOut, err := testenv.HgResult(t, root, "recover")
		if err != nil || !strings.HasPrefix(string(out), "rolling back interrupted transaction\n") {
			t.Fatalf("hg recover: %v\n%s%s", err, out, errOut)
		}
		return
	}
	var status, warn strings.Builder
	ok, err := RecoverContext(t.Context(), root, RecoverOptions{
		Status: func(m string) { status.WriteString(m) },
		Warn:   func(m string) { warn.WriteString(m) },
	})
	if err != nil || !ok {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if status.String() != "rolling back interrupted transaction\n" {
		t.Errorf("status %q", status.String())
	}
	if warn.Len() != 0 {
		t.Errorf("warnings %q", warn.String())
	}
	if exists(filepath.Join(storeDirOf(root), "lock")) {
		t.Error("Recover left the lock")
	}
}

func TestRecoverNothing(t *testing.T) {
	root := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	var warn strings.Builder
	ok, err := RecoverContext(t.Context(), root, RecoverOptions{Warn: func(m string) { warn.WriteString(m) }})
	if ok || err != nil || warn.String() != "no interrupted transaction available\n" {
		t.Fatalf("Recover = %v, %v, warned %q", ok, err, warn.String())
	}
}

func TestBeginRefusesAbandonedJournal(t *testing.T) {
	root := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	sd := storeDirOf(root)
	tx, err := Begin(root, sd, "first", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(root, sd, "second", 1); !errors.Is(err, ErrAbandoned) || !strings.HasPrefix(err.Error(), "abandoned transaction found") {
		t.Fatalf("Begin with a journal: %v", err)
	}
	// What hg says about the same journal, for the message and hint.
	_, errOut, _ := testenv.HgResult(t, root, "bookmark", "x")
	if want := "abort: " + ErrAbandoned.Error() + "\n(" + RecoverHint + ")\n"; string(errOut) != want {
		t.Errorf("hg says %q, we say %q", errOut, want)
	}
	if err := tx.Abort(); err != nil {
		t.Fatal(err)
	}
}

// TestReplace mirrors transaction.replace: the journal lines it writes
// and the offsets it keeps.
func TestReplace(t *testing.T) {
	root := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	sd := storeDirOf(root)
	tx, err := Begin(root, sd, "replace", 1)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tx.Add("data/new.d", 0))
	must(tx.Add("data/old.i", 100))
	must(tx.Add("data/old.i", 50)) // ignored: already known
	must(tx.Replace("data/new.d", 0))
	must(tx.Replace("data/new.d", 30))
	must(tx.Replace("data/old.i", 0))
	if err := tx.Replace("data/other.i", 1); !errors.Is(err, ErrNotInTransaction) {
		t.Errorf("Replace of an unknown file: %v", err)
	}
	if o, ok := tx.FindOffset("data/new.d"); !ok || o != 30 {
		t.Errorf("FindOffset(new.d) = %d, %v", o, ok)
	}
	if o, ok := tx.FindOffset("data/old.i"); !ok || o != 0 {
		t.Errorf("FindOffset(old.i) = %d, %v", o, ok)
	}
	if _, ok := tx.FindOffset("data/none.i"); ok {
		t.Error("FindOffset of an unknown file")
	}
	data, _ := os.ReadFile(filepath.Join(sd, "journal"))
	want := "data/new.d\x000\ndata/old.i\x00100\ndata/new.d\x0030\ndata/old.i\x000\n"
	if string(data) != want {
		t.Errorf("journal = %q, want %q", data, want)
	}
	for _, bad := range []string{"../x", "/abs", "a\nb", "", "data//x"} {
		if err := tx.Add(bad, 0); err == nil {
			t.Errorf("Add(%q) accepted", bad)
		}
	}
	if err := tx.Add("data/neg.i", -1); err == nil {
		t.Error("negative offset accepted")
	}
	// data/new.d cannot be cut to 30 bytes: it does not exist. The
	// rollback fails as hg's does and leaves the journal for recover.
	var msgs strings.Builder
	tx.Report = func(m string) { msgs.WriteString(m) }
	if err := tx.Abort(); !errors.Is(err, ErrTruncate) {
		t.Errorf("Abort = %v, want ErrTruncate", err)
	}
	if !strings.Contains(msgs.String(), "transaction abort!\nrollback failed - please run hg recover\n(failure reason: ") {
		t.Errorf("reported %q", msgs.String())
	}
	if !exists(filepath.Join(sd, "journal")) {
		t.Error("journal removed after a failed rollback")
	}
}

// TestSplit turns an inline filelog into a split one as revlog's
// _enforceinlinesize does (tr.replace of .d and .i), and rolls it back
// by Abort, by Recover after a SIGKILL, and by `hg recover`. The result
// is A's revisions in split form: hg's own rollback does not rejoin
// them, so it is compared through hg, not byte for byte.
func TestSplit(t *testing.T) {
	p := splitPair(t)
	wantLog := string(testenv.Hg(t, p.a, "log", "--debug"))
	wantData := string(testenv.Hg(t, p.a, "debugdata", "big.bin", "2"))
	check := func(t *testing.T, root string) {
		t.Helper()
		hgVerify(t, root)
		if got := string(testenv.Hg(t, root, "log", "--debug")); got != wantLog {
			t.Errorf("hg log --debug:\n%s", testenv.Diff("A", wantLog, "got", got))
		}
		if got := string(testenv.Hg(t, root, "debugdata", "big.bin", "2")); got != wantData {
			t.Error("big.bin rev 2 differs")
		}
		if out := string(testenv.Hg(t, root, "debugrevlog", "big.bin")); strings.Contains(out, "inline") {
			t.Logf("%s", out)
		}
	}
	t.Run("abort", func(t *testing.T) {
		root := testenv.CopyRepo(t, p.a)
		tx, err := Begin(root, storeDirOf(root), "unbundle", 3)
		if err != nil {
			t.Fatal(err)
		}
		apply(t, tx, root, p.b)
		if !exists(filepath.Join(root, ".hg/store/data/big.bin.d")) {
			t.Fatal("the plan did not split big.bin")
		}
		if err := tx.Abort(); err != nil {
			t.Fatal(err)
		}
		check(t, root)
	})
	total := totalEvents(t, p.a, p.b)
	for _, by := range []string{"hgfs", "hg"} {
		t.Run("crash/"+by, func(t *testing.T) {
			root := testenv.CopyRepo(t, p.a)
			runCrashChild(t, root, p.b, total)
			recoverBy(t, by, root)
			check(t, root)
			if st, err := os.Stat(filepath.Join(root, ".hg/store/data/big.bin.i")); err != nil || st.Size() != 3*64 {
				t.Errorf("big.bin.i after recover: %v (want 3 index entries, split)", err)
			}
		})
	}
	// hg's race: killed between the index rename and tr.replace of the
	// .i, the journal wants to truncate the .i to its inline size. hg
	// recover refuses; so does Recover, with hg's message, and changes
	// nothing.
	t.Run("race", func(t *testing.T) {
		root := testenv.CopyRepo(t, p.a)
		runCrashChild(t, root, p.b, eventOf(t, p.a, p.b, "data/big.bin.i", 4))
		_, err := Recover(root)
		if !errors.Is(err, ErrTruncate) || !strings.Contains(err.Error(), "attempted to truncate data/big.bin.i to") {
			t.Fatalf("Recover: %v", err)
		}
		_, errOut, herr := testenv.HgResult(t, root, "recover")
		if herr == nil || !strings.Contains(string(errOut), "attempted to truncate data/big.bin.i to") {
			t.Errorf("hg recover: %v %s", herr, errOut)
		}
	})
}

// TestAddBuffers: RevlogJournal.Add lines, with logical names, wait for
// FlushJournal (or anything that writes), and reach the journal in one
// piece; Tx.Add writes at once.
func TestAddBuffers(t *testing.T) {
	root := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	sd := storeDirOf(root)
	tx, err := Begin(root, sd, "buffer", 1)
	if err != nil {
		t.Fatal(err)
	}
	journal := func() string {
		data, err := os.ReadFile(filepath.Join(sd, "journal"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if err := tx.RevlogJournal("data/a.i").Add("data/_a.i", 0); err != nil {
		t.Fatal(err)
	}
	if err := tx.RevlogJournal("data/b.i").Add("dh/hashed-b.d", 0); err != nil {
		t.Fatal(err)
	}
	if got := journal(); got != "" {
		t.Fatalf("journal before FlushJournal: %q", got)
	}
	if err := tx.FlushJournal(); err != nil {
		t.Fatal(err)
	}
	if got, want := journal(), "data/a.i\x000\ndata/b.d\x000\n"; got != want {
		t.Fatalf("journal = %q, want %q", got, want)
	}
	if err := tx.RevlogJournal("data/c.i").Add("data/c.i", 0); err != nil {
		t.Fatal(err)
	}
	if err := tx.RevlogJournal("data/c.i").Add("data/c.x", 0); err == nil {
		t.Error("RevlogJournal accepted a name that is neither .i nor .d")
	}
	if err := tx.AddBackup("phaseroots"); err != nil {
		t.Fatal(err)
	}
	if got := journal(); !strings.HasSuffix(got, "data/c.i\x000\n") {
		t.Fatalf("AddBackup did not write the pending line first: %q", got)
	}
	if err := tx.Add("data/d.i", 0); err != nil {
		t.Fatal(err)
	}
	if got := journal(); !strings.HasSuffix(got, "data/d.i\x000\n") {
		t.Fatalf("Tx.Add did not write at once: %q", got)
	}
	if err := tx.Abort(); err != nil {
		t.Fatal(err)
	}
}
