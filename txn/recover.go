package txn

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// maxJournalSize bounds what Recover reads of a journal file: a journal
// of every file of a 570,000-file repository is about 60 MB.
const maxJournalSize = 512 << 20

// RecoverOptions tune RecoverContext.
type RecoverOptions struct {
	// Lock tunes the wait for the store lock (hg waits ui.timeout,
	// 600 s, printing "waiting for lock ..."; the zero value tries once).
	Lock store.LockOptions
	// Status receives "rolling back interrupted transaction\n" before
	// the rollback (hg: ui.status).
	Status func(msg string)
	// Warn receives "no interrupted transaction available\n" and the
	// rollback's warnings (hg: ui.warn).
	Warn func(msg string)
}

// RecoverContext rolls back the interrupted transaction of the
// repository at root, as localrepo.recover and transaction.rollback do:
// under the store lock (taken here), if store/journal exists, every
// journaled file is truncated to its recorded size (deleted when it was
// new), backups are restored, and the journal files are removed. It
// returns false, after warning "no interrupted transaction available",
// when there is no journal.
//
// The journal is untrusted: it is parsed and every name checked (see
// ErrBadJournal) and every truncation checked against the file's size
// (ErrTruncate) before any file is changed; on such an error nothing
// is changed and the journal stays. Unlike hg, an unreadable line
// other than a cut-short last one, or a journal.backupfiles of another
// version, is an error rather than a warning: hg would skip it and
// leave the store half rolled back.
func RecoverContext(ctx context.Context, root string, opt RecoverOptions) (bool, error) {
	st, err := store.Open(root)
	if err != nil {
		return false, err
	}
	unlock, err := store.Lock(ctx, st.Dir, opt.Lock)
	if err != nil {
		return false, err
	}
	defer unlock()
	d := dirs{hg: filepath.Join(st.Root, ".hg"), store: st.Dir, layout: st.Layout}
	warn := func(format string, args ...any) {
		if opt.Warn != nil {
			opt.Warn(fmt.Sprintf(format, args...))
		}
	}
	jpath := filepath.Join(d.store, journalName)
	data, err := readJournalFile(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		warn("no interrupted transaction available\n")
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if opt.Status != nil {
		opt.Status("rolling back interrupted transaction\n")
	}
	entries, partial, err := ParseJournal(data)
	if err != nil {
		return false, fmt.Errorf("%s: %w", jpath, err)
	}
	if partial != nil {
		warn("couldn't read journal entry %q!\n", partial)
	}
	bpath := filepath.Join(d.store, backupsName)
	bdata, err := readJournalFile(bpath)
	var backups []BackupEntry
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, err
	default:
		backups, partial, err = ParseBackupFiles(bdata)
		if err != nil {
			return false, fmt.Errorf("%s: %w", bpath, err)
		}
		if partial != nil {
			warn("couldn't read journal.backupfiles entry %q!\n", partial)
		}
	}
	if err := playback(d, entries, backups, warn); err != nil {
		return false, fmt.Errorf("rolling back %s: %w", jpath, err)
	}
	return true, nil
}

// readJournalFile reads a journal file of bounded size; it must be a
// regular file.
func readJournalFile(p string) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadJournal, p)
	}
	if st.Size() > maxJournalSize {
		return nil, fmt.Errorf("%w: %s has %d bytes, more than the %d a journal may have", ErrBadJournal, p, st.Size(), maxJournalSize)
	}
	return os.ReadFile(p)
}

// playback is transaction._playback with unlink=True: it truncates
// journaled files (the last entry of a file wins; offset 0 deletes it),
// restores backups, deletes files that did not exist and temporary
// files, then removes journal.backupfiles, the journal, and the
// backups. Every name and size is checked first, so a bad journal
// changes nothing.
func playback(d dirs, entries []Entry, backups []BackupEntry, report func(string, ...any)) error {
	type op struct {
		name, path string
		offset     int64
	}
	last := map[string]int64{}
	for _, e := range entries {
		last[e.Name] = e.Offset
	}
	var ops []op
	for name, off := range last {
		p, err := d.resolve(Store, name)
		if err != nil {
			return err
		}
		if off > 0 {
			size := int64(0)
			if st, err := os.Lstat(p); err == nil {
				size = st.Size()
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if size < off {
				// hg's message; keep in sync with transaction._playback.
				return fmt.Errorf("%w: attempted to truncate %s to %d bytes, but it was already %d bytes", ErrTruncate, name, off, size)
			}
		}
		ops = append(ops, op{name, p, off})
	}
	slices.SortFunc(ops, func(a, b op) int {
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	type bop struct{ file, backup string } // resolved paths, "" if none
	var bops []bop
	for _, e := range backups {
		if e.File == "" && e.Backup == "" {
			return fmt.Errorf("%w: backup entry with neither file nor backup", ErrBadJournal)
		}
		var b bop
		var err error
		if e.File != "" {
			if b.file, err = d.resolve(e.Location, e.File); err != nil {
				return err
			}
		}
		if e.Backup != "" {
			if b.backup, err = d.resolve(e.Location, e.Backup); err != nil {
				return err
			}
		}
		bops = append(bops, b)
	}

	for _, o := range ops {
		var err error
		if o.offset > 0 {
			err = os.Truncate(o.path, o.offset)
		} else {
			err = unlinkFile(o.path)
		}
		if err != nil {
			report("failed to truncate %s\n", o.name)
			return err
		}
	}
	var restored []string
	for _, b := range bops {
		switch {
		case b.file != "" && b.backup != "":
			if err := copyFile(b.backup, b.file, false); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				// As hg: a backup that is gone cannot be had back by
				// retrying; say so and go on.
				report("failed to recover %s (%v)\n", b.file, err)
				continue
			}
			restored = append(restored, b.backup)
		case b.file != "":
			if err := unlinkFile(b.file); err != nil {
				return err
			}
		default:
			if err := unlinkFile(b.backup); err != nil {
				return err
			}
		}
	}
	if err := keepSplitData(d, entries); err != nil {
		return err
	}
	if err := tryUnlink(filepath.Join(d.store, backupsName)); err != nil {
		return err
	}
	if err := tryUnlink(filepath.Join(d.store, journalName)); err != nil {
		return err
	}
	// Only backups remain: failing to remove one is harmless (hg ignores
	// it too).
	for _, p := range restored {
		tryUnlink(p)
	}
	return nil
}

// keepSplitData lists in the fncache the .d files of revlogs split by
// the rolled-back transaction, for journals whose writer did not (hg's
// own; see Tx.keepInFncache): a .d first journaled as new and then
// replaced with a size, whose .i was replaced too (the split finished:
// before that the .i is still inline and the .d an unlisted leftover).
func keepSplitData(d dirs, entries []Entry) error {
	if !d.layout.HasFncache() {
		return nil
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.Name]++
	}
	var add []string
	for n := range count {
		base, ok := strings.CutSuffix(n, ".d")
		if ok && count[base+".i"] > 1 && store.InFncache(n) && splitData(entries, n) {
			add = append(add, n)
		}
	}
	slices.Sort(add)
	p, err := d.resolve(Store, "fncache")
	if err != nil {
		return err
	}
	for _, a := range add {
		if err := appendFncache(p, a); err != nil {
			return err
		}
	}
	return nil
}
