// Package txn implements Mercurial's store transactions: the journal
// that lets an interrupted or failed write to a repository be rolled
// back, by hgfs (Tx.Abort, Recover) or by real Mercurial (`hg recover`,
// and `hg rollback` of a committed transaction). The specification is
// mercurial/transaction.py and the transaction parts of
// mercurial/localrepo.py (transaction, _writejournal, _journalfiles,
// recover, aftertrans), hg 6.3.
//
// # Terminology
//
//   - Journal: store/journal, one "NAME\0OFFSET\n" line per append-only
//     file (revlogs): its size before the transaction, written before
//     the file's first write (Tx.Add; Tx.Replace after an inline revlog
//     is split). See journal.go.
//   - Logical name: the unencoded store path, "data/Foo.txt.i". hg's
//     journal holds logical names (its store vfs encodes them), never
//     on-disk ones such as "data/_foo.txt.i" or hashed "dh/..." names,
//     and so do Tx's methods. A revlog writer knows only its on-disk
//     names: give it Tx.RevlogJournal(logical index name), which maps
//     its .i and .d back. Recover encodes names with the repository's
//     layout.
//   - Backup: a file rewritten whole (fncache, phaseroots, bookmarks) is
//     first linked to journal.backup.NAME and listed in
//     store/journal.backupfiles (Tx.AddBackup, Tx.WriteFile).
//   - Journal files: the repository state saved at Begin for `hg
//     rollback` (journal.dirstate, .branch, .desc, .bookmarks,
//     .phaseroots); see repofiles.go.
//   - Undo files: at Close every journal.* becomes undo.* (and
//     undo.backupfiles lists undo.backup.* copies), exactly as hg leaves
//     them, so `hg rollback` undoes an hgfs transaction.
//   - Locations: journal.backupfiles entries name files of the store
//     ("") or of .hg ("plain").
//
// A transaction's life: the caller takes the store lock (store.Lock),
// calls Begin, gives each revlog writer a Tx.RevlogJournal, writes
// fncache and phaseroots with Tx.WriteFile and
// bookmarks with Tx.WriteFileIn(Plain, ...), then Close, or Abort on any
// error, then releases the lock.
//
// # Errors
//
// Begin on a repository with a journal is ErrAbandoned (show
// RecoverHint). Recover treats journals as untrusted: a line that does
// not parse, a name that is absolute, has "..", passes through a
// symbolic link, or names a protected file (requires, hgrc, lock, ...)
// or a .hg file hg never journals, is ErrBadJournal; a truncation to
// more bytes than a file has is ErrTruncate (hg's message); all are
// found before any file is touched. ErrJournalVersion, ErrDone,
// ErrNotInTransaction as documented. Errors carry the file involved.
//
// Compatibility notes (differences from hg 6.3, all deliberate):
// Abort deletes files the transaction created, where hg's abort
// truncates them to 0 bytes and leaves them (hg's recover deletes
// them, as here), and removes the journal.* files Begin wrote (hg
// leaves them for the next transaction to overwrite); Recover refuses a malformed journal instead of
// skipping lines; Begin does not create .hg/dirstate when there is
// none (hg writes an empty one to back it up); narrow clones' journal
// files are not written. And the split of an inline revlog: hg 6.3
// splits in place, so a rollback keeps the revlog's old revisions in
// split form (.i and .d) but restores the fncache backup taken before
// the .d existed, after which `hg verify` warns "revlog 'X.d' not in
// fncache!". Tx.Replace of the split .i therefore lists the .d in the
// fncache the rollback will restore (the backup, or the live fncache
// before it is backed up), so that `hg recover` of an hgfs journal
// verifies clean; Recover and Abort do the same for journals hg wrote.
//
// # Concurrency
//
// A Tx's methods may be called from several goroutines (each revlog
// writer calls its RevlogJournal on its own). One transaction per
// repository at a time: that is what the store lock, which the caller
// holds, ensures.
// RecoverContext takes the store lock itself, as `hg recover` does.
//
// # Durability
//
// Like hg, nothing is fsynced: not journal entries, not backups, not
// WriteFileAtomic's files, not Close's renames. The guarantee is the
// one hg gives, against the process dying (kill -9, a crash, a full
// disk): every journal line reaches the journal file (write(2)) before
// any byte of its file is written, and the kernel's page cache keeps
// write order for every later reader, so Recover always finds an entry
// for every file that changed. Tx.Add writes its line at once, as hg
// does (one write(2) per file: 20,000 for an unbundle of 20,000
// files). RevlogJournal.Add buffers instead: revlog.Writer calls
// FlushJournal before any of its bytes reach a file, so the lines of
// all the revlogs written between two flushes go out in one write(2);
// Replace, AddBackup, WriteFile and Close flush too. Backups are
// complete (linked or renamed into place) before their
// journal.backupfiles line is written, and files under backup are
// replaced by rename, never rewritten in place. A power loss gives no
// such order; Mercurial accepts that (its transaction.py calls deeper
// failures "fsck-like tool" territory: hg verify and, for revlogs,
// truncation to what the changelog references). An fsync per flush
// would cost a disk flush per revlog write-out, most of the time that
// buffering saves; a caller wanting power-loss safety would fsync the
// written files and the journal before Close (not offered yet).
package txn
