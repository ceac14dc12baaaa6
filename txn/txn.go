package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hgfs/hgfs/store"
)

// Journal names. Keep in sync with mercurial/localrepo.py transaction()
// ("journal", "undo") and mercurial/transaction.py ("%s.backupfiles",
// "%s.backup.%s").
const (
	journalName = "journal"
	undoBase    = "undo"
	backupsName = "journal.backupfiles"
)

// Tx is a transaction, as mercurial/transaction.py's: it records in the
// journal the size of every append-only file before its first write,
// and backs up files rewritten whole, so that Abort, Recover or
// `hg recover` can undo it. Methods are safe for concurrent use.
type Tx struct {
	// Report receives hg's transaction messages ("transaction abort!",
	// "rollback completed", failures), each ending in "\n"; hg writes
	// them with ui.warn. Nil discards them. Set it before use.
	Report func(msg string)

	mu           sync.Mutex
	d            dirs
	root         string
	files        []journalFile
	journal      *os.File
	backups      *os.File
	entries      []Entry          // journal lines, in order
	pending      []byte           // journal lines not yet written (FlushJournal)
	offsets      map[string]int64 // hg _offsetmap
	newFiles     map[string]bool  // hg _newfiles
	backupList   []BackupEntry
	backupMap    map[string]int // hg _backupmap: File -> index in backupList
	dirstateSave bool
	done         bool
}

// Begin starts a transaction on the repository at root whose store
// directory is storeDir (.hg/store, or .hg for a store-less repository),
// as localrepo.transaction does. It refuses with ErrAbandoned when
// storeDir/journal exists; otherwise it writes the journal.* files hg
// writes (see repofiles.go; desc and changelogLen go to journal.desc),
// then creates journal and journal.backupfiles. The caller holds the
// store lock (store.Lock) until Close or Abort returns.
func Begin(root, storeDir, desc string, changelogLen int) (*Tx, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	storeDir, err = filepath.Abs(storeDir)
	if err != nil {
		return nil, err
	}
	d := dirs{hg: filepath.Join(root, ".hg"), store: storeDir}
	jpath := filepath.Join(d.store, journalName)
	if exists(jpath) {
		return nil, fmt.Errorf("%w (%s)", ErrAbandoned, jpath)
	}
	req, err := readRequires(d)
	if err != nil {
		return nil, err
	}
	d.layout = store.LayoutFor(req)
	v2 := req.Has("dirstate-v2")
	bookmarksDir := d.hg
	if req.Has("bookmarksinstore") {
		bookmarksDir = d.store
	}
	t := &Tx{
		d: d, root: root,
		files:     journalFiles(d, v2, bookmarksDir),
		offsets:   map[string]int64{},
		newFiles:  map[string]bool{},
		backupMap: map[string]int{},
	}
	t.dirstateSave, err = writeJournal(d, v2, bookmarksDir, desc, changelogLen)
	if err != nil {
		return nil, fmt.Errorf("writing journal files: %w", err)
	}
	// O_EXCL: a journal that appeared since the check above is someone
	// else's transaction, never to be truncated.
	t.journal, err = os.OpenFile(jpath, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w (%s)", ErrAbandoned, jpath)
	}
	if err != nil {
		return nil, err
	}
	t.backups, err = os.OpenFile(filepath.Join(d.store, backupsName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o666)
	if err == nil {
		_, err = fmt.Fprintf(t.backups, "%d\n", BackupVersion)
	}
	if err != nil {
		t.journal.Close()
		if t.backups != nil {
			t.backups.Close()
		}
		os.Remove(jpath)
		return nil, err
	}
	return t, nil
}

// Root is the repository root.
func (t *Tx) Root() string { return t.root }

// StoreDir is the store directory journal names are relative to.
func (t *Tx) StoreDir() string { return t.d.store }

// HgDir is the .hg directory (location Plain).
func (t *Tx) HgDir() string { return t.d.hg }

func (t *Tx) report(format string, args ...any) {
	if t.Report != nil {
		t.Report(fmt.Sprintf(format, args...))
	}
}

// known is hg's test before adding any entry for file.
func (t *Tx) known(name string) bool {
	_, off := t.offsets[name]
	_, bk := t.backupMap[name]
	return off || bk || t.newFiles[name]
}

// Add records that the store file name had offset bytes before the
// transaction (0: it did not exist), as tr.add: call it before the
// file's first write. name is the logical store path ("data/Foo.txt.i",
// as hg's journal holds it), not the on-disk one: see RevlogJournal for
// revlog writers. A file the transaction already knows is ignored. The
// line reaches the journal file (one write(2), with any lines buffered
// by a RevlogJournal) before Add returns. It implements revlog.Journal
// for callers whose names are logical.
func (t *Tx) Add(name string, offset int64) error {
	return t.add(name, offset, false)
}

// add is Add; buffered leaves the line for the next flush.
func (t *Tx) add(name string, offset int64, buffered bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDone
	}
	if err := checkName(name, offset); err != nil {
		return err
	}
	if t.known(name) {
		return nil
	}
	if offset != 0 {
		t.offsets[name] = offset
	} else {
		t.newFiles[name] = true
	}
	t.entries = append(t.entries, Entry{name, offset})
	t.pending = AppendEntry(t.pending, Entry{name, offset})
	if !buffered || len(t.pending) >= maxPending {
		return t.flush()
	}
	return nil
}

// maxPending bounds the journal buffer; flushing early is always safe.
const maxPending = 256 << 10

// FlushJournal writes the lines RevlogJournal.Add buffered, with one
// write(2).
func (t *Tx) FlushJournal() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDone
	}
	return t.flush()
}

func (t *Tx) flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	if _, err := t.journal.Write(t.pending); err != nil {
		return fmt.Errorf("writing journal: %w", err)
	}
	t.pending = t.pending[:0]
	return nil
}

// Replace changes the recorded offset of a file the transaction has an
// entry for, as tr.replace does after an inline revlog is split: the
// new .i holds index entries only, and the new .d the data, so their
// pre-transaction sizes are new numbers (see revlog._enforceinlinesize).
// A file that was new and stays at 0 writes nothing, as in hg. A file
// without an entry is ErrNotInTransaction. name is logical, as for
// Add. The line is written (with any buffered ones) before Replace returns:
// hg orders the .d's replace before the index rename. It implements
// revlog.Journal.
func (t *Tx) Replace(name string, offset int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDone
	}
	if err := checkName(name, offset); err != nil {
		return err
	}
	switch {
	case t.newFiles[name]:
		if offset == 0 {
			return nil
		}
		delete(t.newFiles, name)
		t.offsets[name] = offset
	case hasKey(t.offsets, name):
		if offset == 0 {
			delete(t.offsets, name)
			t.newFiles[name] = true
		} else {
			t.offsets[name] = offset
		}
	default:
		return fmt.Errorf("replace %s: %w", name, ErrNotInTransaction)
	}
	if err := t.writeEntry(Entry{name, offset}); err != nil {
		return err
	}
	if base, ok := strings.CutSuffix(name, ".i"); ok && splitData(t.entries, base+".d") {
		return t.keepInFncache(base + ".d")
	}
	return nil
}

// keepInFncache makes the fncache the transaction would restore list
// name, the .d of a revlog it split: hg 6.3 splits in place, so a
// rollback keeps the revlog split, and a fncache without its .d makes
// `hg verify` warn "revlog 'X.d' not in fncache!" (as it does after
// hg's own rollback of a split). It runs after the index was replaced
// (the .i's Replace), when the .d is the revlog's data either way. The
// entry goes to the fncache backup if there is one, else to the live
// fncache, before any backup of it: a line the rollback keeps.
func (t *Tx) keepInFncache(name string) error {
	if !t.d.layout.HasFncache() || !store.InFncache(name) {
		return nil
	}
	target := filepath.Join(t.d.store, "fncache")
	if i, ok := t.backupMap["fncache"]; ok {
		b := t.backupList[i]
		if b.Backup == "" {
			return nil // no fncache before: the split file predates nothing
		}
		p, err := t.d.resolve(b.Location, b.Backup)
		if err != nil {
			return err
		}
		target = p
	}
	return appendFncache(target, name)
}

// appendFncache adds name to the fncache file at p unless listed,
// replacing the file (it may be hard-linked to a backup).
func appendFncache(p, name string) error {
	data, err := tryRead(p)
	if err != nil {
		return err
	}
	have, err := store.ParseFncache(data)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if _, found := slices.BinarySearch(have, name); found {
		return nil
	}
	return WriteFileAtomic(p, append(data, store.EncodeDir(name)+"\n"...))
}

// splitData reports whether entries show the .d file name of a revlog
// split during the transaction: first journaled as new (0), then
// replaced with the size its data had.
func splitData(entries []Entry, name string) bool {
	first, last, seen := int64(0), int64(0), false
	for _, e := range entries {
		if e.Name == name {
			if !seen {
				first, seen = e.Offset, true
			}
			last = e.Offset
		}
	}
	return seen && first == 0 && last > 0
}

func hasKey(m map[string]int64, k string) bool { _, ok := m[k]; return ok }

// FindOffset is tr.findoffset: the recorded pre-transaction size of
// the logical name (0 for a new file), and false when the transaction
// has no entry.
func (t *Tx) FindOffset(name string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.newFiles[name] {
		return 0, true
	}
	o, ok := t.offsets[name]
	return o, ok
}

// Entries returns the journal entries written so far, in order, with
// logical names.
func (t *Tx) Entries() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Entry(nil), t.entries...)
}

// checkName validates a logical name and an offset.
func checkName(name string, offset int64) error {
	if offset < 0 {
		return fmt.Errorf("journal entry %s: negative offset %d", name, offset)
	}
	if err := store.ValidateName(name); err != nil {
		return fmt.Errorf("journal entry: %w", err)
	}
	return nil
}

// writeEntry appends e and writes it with any buffered lines.
func (t *Tx) writeEntry(e Entry) error {
	t.entries = append(t.entries, e)
	t.pending = AppendEntry(t.pending, e)
	return t.flush()
}

// AddBackup backs up the store file name (fncache, phaseroots, ...) so
// that rollback restores it, as tr.addbackup: the backup is
// journal.backup.BASENAME beside it, a hard link when the filesystem
// allows, else a copy; a missing file is recorded as such (rollback
// deletes it). The file must then be replaced whole, by
// WriteFileAtomic or WriteFile, never modified in place: a hard-linked
// backup would change with it. A file the transaction already knows is
// ignored.
func (t *Tx) AddBackup(name string) error { return t.AddBackupIn(Store, name) }

// AddBackupIn is AddBackup for a file of location loc (Plain: .hg, for
// the bookmarks).
func (t *Tx) AddBackupIn(loc Location, name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDone
	}
	p, err := t.d.resolve(loc, name)
	if err != nil {
		return err
	}
	if t.known(name) {
		return nil
	}
	dir, base := path.Split(name)
	backup := dir + journalName + ".backup." + base
	if exists(p) {
		bp, err := t.d.resolve(loc, backup)
		if err != nil {
			return err
		}
		if err := copyFile(p, bp, true); err != nil {
			return fmt.Errorf("backing up %s: %w", name, err)
		}
	} else {
		backup = ""
	}
	return t.addBackupEntry(BackupEntry{Location: loc, File: name, Backup: backup})
}

// RegisterTmp records a temporary file of the transaction, deleted when
// it ends either way (tr.registertmp).
func (t *Tx) RegisterTmp(loc Location, name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDone
	}
	if _, err := t.d.resolve(loc, name); err != nil {
		return err
	}
	return t.addBackupEntry(BackupEntry{Location: loc, Backup: name})
}

func (t *Tx) addBackupEntry(e BackupEntry) error {
	// Journal lines first: whoever backs up a file is about to write.
	if err := t.flush(); err != nil {
		return err
	}
	if _, err := t.backups.Write(AppendBackupEntry(nil, e)); err != nil {
		return fmt.Errorf("writing journal.backupfiles: %w", err)
	}
	t.backupList = append(t.backupList, e)
	if e.File != "" {
		t.backupMap[e.File] = len(t.backupList) - 1
	}
	return nil
}

// WriteFile backs up the store file name (AddBackup) and replaces it
// with data (WriteFileAtomic): how hg writes fncache and phaseroots in
// a transaction.
func (t *Tx) WriteFile(name string, data []byte) error {
	return t.WriteFileIn(Store, name, data)
}

// WriteFileIn is WriteFile for location loc (Plain: .hg/bookmarks).
func (t *Tx) WriteFileIn(loc Location, name string, data []byte) error {
	if err := t.AddBackupIn(loc, name); err != nil {
		return err
	}
	p, err := t.d.resolve(loc, name)
	if err != nil {
		return err
	}
	return WriteFileAtomic(p, data)
}

// Close commits the transaction as transaction.close and localrepo's
// aftertrans do: temporary files are deleted; undo.backupfiles is
// written, each journal.backup.X linked to undo.backup.X; each journal.*
// file of the repository is renamed to undo.* (a stale undo.* whose
// journal.* is absent is removed), journal first: that rename is the
// commit point, after which nothing rolls back; then journal.backupfiles
// and the journal.backup.* files are removed. `hg rollback` can then
// undo the transaction as if hg had made it. Close does not fsync (see
// the package's Durability notes).
func (t *Tx) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDone
	}
	t.done = true
	err := errors.Join(t.flush(), t.journal.Close(), t.backups.Close())
	for _, e := range t.backupList {
		if e.File == "" && e.Backup != "" {
			if p, rerr := t.d.resolve(e.Location, e.Backup); rerr == nil {
				err = errors.Join(err, tryUnlink(p))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("closing transaction: %w", err)
	}
	t.offsets, t.newFiles = nil, nil
	if err := t.writeUndo(); err != nil {
		return fmt.Errorf("writing undo files: %w", err)
	}
	for _, f := range t.files {
		src := filepath.Join(f.dir, f.name)
		dst := filepath.Join(f.dir, undoName(f.name))
		if err := tryUnlink(dst); err != nil {
			return err
		}
		if err := os.Rename(src, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := tryUnlink(filepath.Join(t.d.store, backupsName)); err != nil {
		return err
	}
	for _, e := range t.backupList {
		if e.Backup == "" {
			continue
		}
		if p, rerr := t.d.resolve(e.Location, e.Backup); rerr == nil {
			if err := tryUnlink(p); err != nil {
				return err
			}
		}
	}
	t.backupList = nil
	return nil
}

// writeUndo is transaction._writeundo.
func (t *Tx) writeUndo() error {
	buf := fmt.Appendf(nil, "%d\n", BackupVersion)
	for _, e := range t.backupList {
		if e.File == "" {
			continue // temporary file
		}
		u := ""
		if e.Backup != "" {
			u = undoName(e.Backup)
			src, err := t.d.resolve(e.Location, e.Backup)
			if err != nil {
				return err
			}
			dst, err := t.d.resolve(e.Location, u)
			if err != nil {
				return err
			}
			if err := copyFile(src, dst, true); err != nil {
				return err
			}
		}
		buf = AppendBackupEntry(buf, BackupEntry{Location: e.Location, File: e.File, Backup: u, Cache: e.Cache})
	}
	return os.WriteFile(filepath.Join(t.d.store, undoBase+".backupfiles"), buf, 0o666)
}

// Abort undoes the transaction as transaction._abort does, reporting
// "transaction abort!" and "rollback completed" (nothing when the
// transaction recorded nothing): files are truncated to their recorded
// sizes, backups restored, and the journal removed; the dirstate backup
// is put back as localrepo's releasefn does. Unlike hg's abort, files
// the transaction created are deleted rather than left empty (hg's
// recover deletes them too), so the store is as it was.
//
// If the rollback fails, Abort reports "rollback failed - please run hg
// recover" and the failure, returns the error, and leaves the journal
// for Recover.
func (t *Tx) Abort() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return ErrDone
	}
	t.done = true
	t.journal.Close()
	t.backups.Close()
	if t.dirstateSave {
		defer func() {
			if err := restoreDirstate(t.d); err != nil {
				t.report("failed to restore dirstate: %v\n", err)
			}
		}()
	}
	if len(t.entries) == 0 && len(t.backupList) == 0 {
		return errors.Join(tryUnlink(filepath.Join(t.d.store, backupsName)),
			tryUnlink(filepath.Join(t.d.store, journalName)), t.removeJournalFiles())
	}
	t.report("transaction abort!\n")
	if err := playback(t.d, t.entries, t.backupList, t.report); err != nil {
		t.report("rollback failed - please run hg recover\n")
		t.report("(failure reason: %v)\n", err)
		return fmt.Errorf("rolling back transaction: %w", err)
	}
	t.report("rollback completed\n")
	return t.removeJournalFiles()
}

// removeJournalFiles removes the journal.* files Begin wrote for `hg
// rollback` (the dirstate backup is restoreDirstate's). hg leaves them
// after an abort, to be overwritten by the next transaction; removing
// them leaves .hg as it was before Begin.
func (t *Tx) removeJournalFiles() error {
	var err error
	for _, f := range t.files {
		if f.name == journalName || strings.HasPrefix(f.name, "journal.dirstate") {
			continue
		}
		err = errors.Join(err, tryUnlink(filepath.Join(f.dir, f.name)))
	}
	return err
}
