package txn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestRecoverHgJournal rolls back a journal written by hg itself: a
// commit killed (SIGKILL, from its pretxnclose hook) after writing its
// revlogs.
func TestRecoverHgJournal(t *testing.T) {
	a := testenv.Generate(t, testenv.Small)
	before, _ := snapshot(a)
	root := testenv.CopyRepo(t, a)
	testenv.Hg(t, root, "update", "-q", "-r", "tip")
	if err := os.WriteFile(filepath.Join(root, "Killed New.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Hg(t, root, "add", "-q", "Killed New.txt")
	_, _, err := testenv.HgResult(t, root, "commit", "-m", "killed", "--config", "hooks.pretxnclose=kill -9 $PPID")
	if err == nil {
		t.Fatal("hg commit survived its kill -9 hook")
	}
	data, err := os.ReadFile(filepath.Join(storeDirOf(root), "journal"))
	if err != nil {
		t.Fatalf("hg left no journal: %v", err)
	}
	entries, _, err := ParseJournal(data)
	if err != nil || len(entries) < 3 {
		t.Fatalf("hg's journal: %v %q", err, data)
	}
	if !strings.Contains(string(data), "data/_killed _new.txt.i\x000\n") && !strings.Contains(string(data), "data/Killed New.txt.i\x000\n") {
		t.Errorf("hg's journal lacks the new file: %q", data)
	}
	ok, err := Recover(root)
	if !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	sameState(t, root, before, "after Recover of hg's journal")
	hgVerify(t, root)
}

// TestRecoverRefusesHostileJournal: journals naming files outside the
// store, through symbolic links, protected files, or impossible sizes
// are refused before anything changes.
func TestRecoverRefusesHostileJournal(t *testing.T) {
	a := testenv.Generate(t, testenv.Small)
	before, _ := snapshot(a)
	cases := []struct {
		name, journal, backups string
		setup                  func(t *testing.T, root, outside string)
		want                   error
	}{
		{name: "dotdot", journal: "../../victim\x000\n", want: ErrBadJournal},
		{name: "absolute", journal: "/tmp/victim\x000\n", want: ErrBadJournal},
		{name: "backslash", journal: "data\\..\\..\\victim\x000\n", want: ErrBadJournal},
		{name: "protected", journal: "requires\x000\n", want: ErrBadJournal},
		{name: "lock", journal: "lock\x000\n", want: ErrBadJournal},
		{name: "symlinked dir", journal: "data/evil/victim\x000\n", want: ErrBadJournal,
			setup: func(t *testing.T, root, outside string) {
				if err := os.Symlink(outside, filepath.Join(storeDirOf(root), "data", "evil")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "symlinked file", journal: "data/evil-link.i\x005\n", want: ErrBadJournal,
			setup: func(t *testing.T, root, outside string) {
				if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(storeDirOf(root), "data", "evil-link.i")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "plain hgrc", journal: "", backups: "2\nplain\x00hgrc\x00\x000\n", want: ErrBadJournal},
		{name: "plain subdir", journal: "", backups: "2\nplain\x00store/fncache\x00\x000\n", want: ErrBadJournal},
		{name: "backup from outside", journal: "", backups: "2\n\x00fncache\x00../../victim\x000\n", want: ErrBadJournal},
		{name: "unknown location", journal: "", backups: "2\ncache\x00x\x00\x000\n", want: ErrBadJournal},
		{name: "empty backup entry", journal: "", backups: "2\n\x00\x00\x000\n", want: ErrBadJournal},
		{name: "version", journal: "", backups: "3\n\x00fncache\x00\x000\n", want: ErrJournalVersion},
		{name: "garbage line", journal: "00changelog.i\x001\nnot a line\n", want: ErrBadJournal},
		{name: "grow", journal: "00changelog.i\x00999999999\n", want: ErrTruncate},
		// A good entry before a bad one is not applied either.
		{name: "all or nothing", journal: "00changelog.i\x001\n00manifest.i\x000\n../x\x000\n", want: ErrBadJournal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := testenv.CopyRepo(t, a)
			outside := t.TempDir()
			victim := filepath.Join(outside, "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A copy at the ../../victim position too.
			if err := os.WriteFile(filepath.Join(root, "..", "victim"), []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, ".hg", "hgrc"), []byte("[ui]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			sd := storeDirOf(root)
			if c.setup != nil {
				c.setup(t, root, outside)
			}
			if err := os.WriteFile(filepath.Join(sd, "journal"), []byte(c.journal), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.backups != "" {
				if err := os.WriteFile(filepath.Join(sd, "journal.backupfiles"), []byte(c.backups), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ok, err := Recover(root)
			if ok || !errors.Is(err, c.want) {
				t.Fatalf("Recover = %v, %v; want %v", ok, err, c.want)
			}
			t.Logf("%v", err)
			for _, v := range []string{victim, filepath.Join(root, "..", "victim")} {
				if data, err := os.ReadFile(v); err != nil || string(data) != "precious" {
					t.Errorf("%s: %q, %v", v, data, err)
				}
			}
			if _, err := os.Stat(filepath.Join(root, ".hg", "hgrc")); err != nil {
				t.Error("hgrc removed")
			}
			if !exists(filepath.Join(sd, "journal")) {
				t.Error("the journal was removed")
			}
			os.Remove(filepath.Join(sd, "data", "evil"))
			os.Remove(filepath.Join(sd, "data", "evil-link.i"))
			sameState(t, root, before, "after a refused Recover")
		})
	}
}

func TestRecoverRefusesNonRegularJournal(t *testing.T) {
	root := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	outside := filepath.Join(t.TempDir(), "j")
	os.WriteFile(outside, []byte("00changelog.i\x000\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(storeDirOf(root), "journal")); err != nil {
		t.Fatal(err)
	}
	if _, err := Recover(root); !errors.Is(err, ErrBadJournal) {
		t.Fatalf("Recover with a symlinked journal: %v", err)
	}
}

// TestRecoverTornLine: a last line cut short is skipped with hg's
// warning; the rest is rolled back.
func TestRecoverTornLine(t *testing.T) {
	a := testenv.Generate(t, testenv.Small)
	before, _ := snapshot(a)
	root := testenv.CopyRepo(t, a)
	sd := storeDirOf(root)
	cl := filepath.Join(sd, "00changelog.i")
	st, err := os.Stat(cl)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(cl, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("junk written in the transaction")
	f.Close()
	j := string(AppendEntry(nil, Entry{"00changelog.i", st.Size()})) + "00manifest.i\x001"
	if err := os.WriteFile(filepath.Join(sd, "journal"), []byte(j), 0o644); err != nil {
		t.Fatal(err)
	}
	var warn strings.Builder
	ok, err := RecoverContext(t.Context(), root, RecoverOptions{Warn: func(m string) { warn.WriteString(m) }})
	if !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if want := "couldn't read journal entry \"00manifest.i\\x001\"!\n"; warn.String() != want {
		t.Errorf("warned %q, want %q", warn.String(), want)
	}
	sameState(t, root, before, "after Recover")
}

// TestRecoverWaitsForLock: Recover takes the store lock; a live holder
// makes it fail with the store's lock error.
func TestRecoverHonoursLock(t *testing.T) {
	root := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	sd := storeDirOf(root)
	host, _ := os.Hostname()
	// Held by pid 1 of "another host": never stale.
	if err := os.Symlink(host+"-elsewhere:1", filepath.Join(sd, "lock")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sd, "journal"), nil, 0o644)
	if _, err := Recover(root); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("Recover under someone else's lock: %v", err)
	}
	if !exists(filepath.Join(sd, "journal")) {
		t.Error("journal removed without the lock")
	}
}

// Recover is RecoverContext with default options: `hg recover` without
// the verify that follows it.
func Recover(root string) (bool, error) {
	return RecoverContext(context.Background(), root, RecoverOptions{})
}
