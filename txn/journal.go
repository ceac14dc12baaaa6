package txn

// The two journal files of a transaction, as mercurial/transaction.py
// writes them in the store directory (names relative to it):
//
//	journal              one line per append-only file:  NAME \0 OFFSET \n
//	                     OFFSET (decimal) is the size before the
//	                     transaction; 0 means the file is new. Later lines
//	                     for the same NAME (tr.replace) win.
//	journal.backupfiles  "2\n" (the format version), then one line per
//	                     backed-up or temporary file:
//	                     LOCATION \0 FILE \0 BACKUP \0 CACHE \n
//	                     LOCATION "" is the store, "plain" is .hg;
//	                     FILE "" marks a temporary file BACKUP to delete;
//	                     BACKUP "" means FILE did not exist (delete it on
//	                     rollback); CACHE is "0" or "1".
//
// undo and undo.backupfiles, left by a committed transaction for
// `hg rollback`, have the same formats.

import (
	"bytes"
	"fmt"
	"strconv"
)

// BackupVersion is the first line of journal.backupfiles. Keep in sync
// with mercurial/transaction.py (version).
const BackupVersion = 2

// Location names where a backup entry's files live. Keep in sync with
// mercurial/localrepo.py (transaction's vfsmap).
type Location string

const (
	// Store is the store directory (hg's svfs, location "").
	Store Location = ""
	// Plain is the .hg directory (hg's vfs, location "plain"): the
	// dirstate and bookmarks.
	Plain Location = "plain"
	// storeAlias is the store too: revlog dockets back up with
	// location "store".
	storeAlias Location = "store"
)

// Entry is a journal line: the file Name (relative to the store) had
// Offset bytes before the transaction; 0 means it did not exist.
type Entry struct {
	Name   string
	Offset int64
}

// BackupEntry is a journal.backupfiles line.
type BackupEntry struct {
	Location Location
	File     string // "" for a temporary file
	Backup   string // "" when File did not exist at backup time
	Cache    bool
}

// AppendEntry appends e's journal line to b.
func AppendEntry(b []byte, e Entry) []byte {
	b = append(b, e.Name...)
	b = append(b, 0)
	b = strconv.AppendInt(b, e.Offset, 10)
	return append(b, '\n')
}

// AppendBackupEntry appends e's journal.backupfiles line to b.
func AppendBackupEntry(b []byte, e BackupEntry) []byte {
	b = append(b, e.Location...)
	b = append(b, 0)
	b = append(b, e.File...)
	b = append(b, 0)
	b = append(b, e.Backup...)
	b = append(b, 0)
	if e.Cache {
		b = append(b, '1')
	} else {
		b = append(b, '0')
	}
	return append(b, '\n')
}

// ParseJournal parses a journal file. An unterminated last line is a
// line whose write(2) an interruption cut short: it is returned as
// partial, not parsed (the file it names was not written yet, since
// entries are written before their file). Any other malformed line is
// an ErrBadJournal naming the line. Names are not validated here (see
// Recover).
func ParseJournal(data []byte) (entries []Entry, partial []byte, err error) {
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return entries, data, nil
		}
		line := data[:i]
		data = data[i+1:]
		name, off, ok := bytes.Cut(line, []byte{0})
		if !ok {
			return nil, nil, fmt.Errorf("%w: journal line %d: no NUL separator in %q", ErrBadJournal, lineNo, line)
		}
		o, err := parseOffset(off)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: journal line %d (%q): %v", ErrBadJournal, lineNo, name, err)
		}
		entries = append(entries, Entry{Name: string(name), Offset: o})
	}
	return entries, nil, nil
}

// parseOffset accepts what "%d" writes for a non-negative int64.
func parseOffset(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 19 {
		return 0, fmt.Errorf("offset %q is not a decimal size", b)
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("offset %q is not a decimal size", b)
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("offset %q: %v", b, err)
	}
	return n, nil
}

// ParseBackupFiles parses a journal.backupfiles file. An empty file has
// no entries (hg creates it before writing the version line). A version
// other than BackupVersion is ErrJournalVersion; an unterminated last
// line is returned as partial (see ParseJournal); other malformed lines
// are ErrBadJournal.
func ParseBackupFiles(data []byte) (entries []BackupEntry, partial []byte, err error) {
	if len(data) == 0 {
		return nil, nil, nil
	}
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		// Even the version line was cut short: nothing was backed up.
		return nil, data, nil
	}
	if v := data[:i]; string(v) != strconv.Itoa(BackupVersion) {
		return nil, nil, fmt.Errorf("%w (version %q, want %d)", ErrJournalVersion, v, BackupVersion)
	}
	data = data[i+1:]
	lineNo := 1
	for len(data) > 0 {
		lineNo++
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return entries, data, nil
		}
		line := data[:i]
		data = data[i+1:]
		f := bytes.Split(line, []byte{0})
		if len(f) != 4 {
			return nil, nil, fmt.Errorf("%w: journal.backupfiles line %d: %d fields, want 4: %q", ErrBadJournal, lineNo, len(f), line)
		}
		var cache bool
		switch string(f[3]) {
		case "0":
		case "1":
			cache = true
		default:
			return nil, nil, fmt.Errorf("%w: journal.backupfiles line %d: cache flag %q, want 0 or 1", ErrBadJournal, lineNo, f[3])
		}
		entries = append(entries, BackupEntry{Location: Location(f[0]), File: string(f[1]), Backup: string(f[2]), Cache: cache})
	}
	return entries, nil, nil
}
