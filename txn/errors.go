package txn

import "errors"

// Sentinel errors. Functions wrap them with %w and context (the file,
// the journal line); test with errors.Is.
var (
	// ErrAbandoned: Begin found store/journal, left by an interrupted
	// transaction. The message is hg's; show RecoverHint with it.
	ErrAbandoned = errors.New("abandoned transaction found")

	// ErrBadJournal: a journal or journal.backupfiles line that does not
	// parse, or names a file that is not a clean path inside its
	// location (absolute, "..", through a symlink, a protected file such
	// as requires or hgrc). Recover refuses the whole journal before
	// touching any file.
	ErrBadJournal = errors.New("invalid transaction journal")

	// ErrJournalVersion: journal.backupfiles starts with a version other
	// than 2 (hg: "journal was created by a different version of
	// Mercurial").
	ErrJournalVersion = errors.New("journal was created by a different version of Mercurial")

	// ErrTruncate: a journal entry asks to truncate a file to more bytes
	// than it has (hg: "attempted to truncate F to N bytes, but it was
	// already M bytes"); rollback stops and the journal stays.
	ErrTruncate = errors.New("cannot truncate")

	// ErrNotInTransaction: Replace of a file the transaction has no entry
	// for (hg raises KeyError).
	ErrNotInTransaction = errors.New("file not in the transaction")

	// ErrDone: the transaction was already closed or aborted.
	ErrDone = errors.New("transaction already committed or aborted")
)

// RecoverHint is hg's hint for ErrAbandoned. Keep in sync with
// mercurial/localrepo.py transaction().
const RecoverHint = "run 'hg recover' to clean up transaction"
