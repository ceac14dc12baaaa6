package txn

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

func TestParseJournal(t *testing.T) {
	data := []byte("data/a.i\x0067\ndata/d/X.i\x000\n00changelog.i\x00138\ndata/torn.i\x001")
	got, partial, err := ParseJournal(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"data/a.i", 67}, {"data/d/X.i", 0}, {"00changelog.i", 138}}
	if !reflect.DeepEqual(got, want) || string(partial) != "data/torn.i\x001" {
		t.Fatalf("got %v partial %q", got, partial)
	}
	var enc []byte
	for _, e := range got {
		enc = AppendEntry(enc, e)
	}
	if !bytes.Equal(enc, data[:len(data)-len(partial)]) {
		t.Errorf("re-encoded %q", enc)
	}
	for _, bad := range []string{"noseparator\n", "a\x00\n", "a\x00-1\n", "a\x00 1\n", "a\x001x\n", "a\x0099999999999999999999\n", "a\x001\x002\n"} {
		if _, _, err := ParseJournal([]byte(bad)); !errors.Is(err, ErrBadJournal) {
			t.Errorf("ParseJournal(%q) = %v, want ErrBadJournal", bad, err)
		}
	}
}

func TestParseBackupFiles(t *testing.T) {
	data := []byte("2\n\x00fncache\x00journal.backup.fncache\x000\nplain\x00dirstate\x00\x001\n\x00\x00dirstate.pending\x000\n")
	got, partial, err := ParseBackupFiles(data)
	if err != nil || partial != nil {
		t.Fatal(err, partial)
	}
	want := []BackupEntry{
		{Store, "fncache", "journal.backup.fncache", false},
		{Plain, "dirstate", "", true},
		{Store, "", "dirstate.pending", false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	enc := []byte("2\n")
	for _, e := range got {
		enc = AppendBackupEntry(enc, e)
	}
	if !bytes.Equal(enc, data) {
		t.Errorf("re-encoded %q", enc)
	}
	if e, p, err := ParseBackupFiles(nil); e != nil || p != nil || err != nil {
		t.Error("empty file")
	}
	if _, _, err := ParseBackupFiles([]byte("1\n")); !errors.Is(err, ErrJournalVersion) {
		t.Errorf("version 1: %v", err)
	}
	for _, bad := range []string{"2\na\x00b\x00c\n", "2\n\x00a\x00b\x002\n", "2\n\x00a\x00b\x00c\x000\n"} {
		if _, _, err := ParseBackupFiles([]byte(bad)); !errors.Is(err, ErrBadJournal) {
			t.Errorf("ParseBackupFiles(%q) = %v, want ErrBadJournal", bad, err)
		}
	}
}

// TestJournalMatchesHg parses the undo files hg left after a commit that
// split an inline filelog, and compares the filelog's lines with the
// ones our Tx writes for the same split (tr.add, tr.replace).
func TestJournalMatchesHg(t *testing.T) {
	p := splitPair(t)
	sd := storeDirOf(p.b)
	data, err := os.ReadFile(filepath.Join(sd, "undo"))
	if err != nil {
		t.Fatal(err)
	}
	hgEntries, partial, err := ParseJournal(data)
	if err != nil || partial != nil {
		t.Fatalf("hg's undo: %v %q", err, partial)
	}
	bdata, err := os.ReadFile(filepath.Join(sd, "undo.backupfiles"))
	if err != nil {
		t.Fatal(err)
	}
	hgBackups, _, err := ParseBackupFiles(bdata)
	if err != nil {
		t.Fatalf("hg's undo.backupfiles: %v", err)
	}
	if !reflect.DeepEqual(hgBackups[0], BackupEntry{Store, "fncache", "undo.backup.fncache", false}) {
		t.Errorf("hg's undo.backupfiles: %+v", hgBackups)
	}
	only := func(es []Entry) []Entry {
		var out []Entry
		for _, e := range es {
			if strings.HasPrefix(e.Name, "data/big.bin.") {
				out = append(out, e)
			}
		}
		return out
	}
	root := testenv.CopyRepo(t, p.a)
	tx, err := Begin(root, storeDirOf(root), "commit", 3)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, tx, root, p.b)
	ours := only(tx.Entries())
	if err := tx.Abort(); err != nil {
		t.Fatal(err)
	}
	if want := only(hgEntries); !reflect.DeepEqual(ours, want) || len(want) != 4 {
		t.Errorf("journal lines for the split filelog:\nhg:   %v\nours: %v", want, ours)
	}
}

// FuzzParseJournal: no panic; what parses re-encodes to the input.
func FuzzParseJournal(f *testing.F) {
	f.Add([]byte("data/a.i\x0067\ndata/d/X.i\x000\n00changelog.i\x00138\n"))
	f.Add([]byte("data/x.i\x0012"))
	f.Add([]byte("\x00\n"))
	f.Add([]byte("a\x00-5\n"))
	f.Add([]byte("../../etc/passwd\x000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, partial, err := ParseJournal(data)
		if err != nil {
			return
		}
		var enc []byte
		for _, e := range entries {
			if e.Offset < 0 {
				t.Fatalf("negative offset %d", e.Offset)
			}
			enc = AppendEntry(enc, e)
		}
		enc = append(enc, partial...)
		// Offsets may be written with leading zeros; compare parses.
		again, partial2, err := ParseJournal(enc)
		if err != nil || !reflect.DeepEqual(again, entries) || !bytes.Equal(partial2, partial) {
			t.Fatalf("round trip: %v %v", again, err)
		}
	})
}

// FuzzParseBackupFiles: no panic; what parses re-encodes to the input.
func FuzzParseBackupFiles(f *testing.F) {
	f.Add([]byte("2\n\x00fncache\x00journal.backup.fncache\x000\nplain\x00dirstate\x00\x001\n"))
	f.Add([]byte("2\n\x00\x00dirstate.pending\x000\n"))
	f.Add([]byte("2\n\x00phaseroots\x00journal.backup.phaseroots\x000"))
	f.Add([]byte("1\n"))
	f.Add([]byte("2"))
	f.Add([]byte("2\nstore\x00../x\x00y\x001\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, partial, err := ParseBackupFiles(data)
		if err != nil {
			return
		}
		if len(entries) == 0 && partial == nil {
			return
		}
		enc := []byte("2\n")
		if len(entries) == 0 && !bytes.HasPrefix(data, enc) {
			return // a cut-short version line
		}
		for _, e := range entries {
			enc = AppendBackupEntry(enc, e)
		}
		enc = append(enc, partial...)
		if !bytes.Equal(enc, data) {
			t.Fatalf("re-encoded %q, parsed from %q", enc, data)
		}
	})
}
