package txn

// The repository-level journal files a transaction writes at its start
// and renames to undo.* at its end, as localrepo._writejournal and
// localrepo._journalfiles do. They are what `hg rollback` reads later:
//
//	.hg/journal.dirstate            a hard link (or copy) of .hg/dirstate
//	.hg/journal.dirstate.v2-data    with dirstate-v2: a copy of its data file
//	.hg/journal.branch              the working directory's branch, no newline
//	.hg/journal.desc                "<changelog length>\n<description>\n"
//	.hg/journal.bookmarks           a copy of .hg/bookmarks ("" when absent;
//	                                in the store with bookmarksinstore)
//	store/journal.phaseroots        a copy of store/phaseroots ("" when absent)
//
// Narrow clones (journal.narrowspec*) are not supported: hgfs refuses
// the narrowhg requirement before it gets here.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/dirstate"
	"github.com/hgfs/hgfs/store"
)

// journalFile is one of localrepo._journalfiles: a directory and the
// journal.* name in it.
type journalFile struct{ dir, name string }

// journalFiles lists them in hg's order (the order of the renames at
// close). Keep in sync with mercurial/localrepo.py _journalfiles.
func journalFiles(d dirs, dirstateV2 bool, bookmarksDir string) []journalFile {
	out := []journalFile{
		{d.store, "journal"},
		{d.store, "journal.narrowspec"},
		{d.hg, "journal.narrowspec.dirstate"},
		{d.hg, "journal.dirstate"},
	}
	if dirstateV2 {
		out = append(out, journalFile{d.hg, "journal.dirstate.v2-data"})
	}
	return append(out,
		journalFile{d.hg, "journal.branch"},
		journalFile{d.hg, "journal.desc"},
		journalFile{bookmarksDir, "journal.bookmarks"},
		journalFile{d.store, "journal.phaseroots"},
	)
}

// undoName is localrepo.undoname: the first "journal" of the base name
// becomes "undo".
func undoName(name string) string {
	dir, base := filepath.Split(name)
	return dir + strings.Replace(base, "journal", "undo", 1)
}

// readRequires returns the requirements of .hg/requires (and, with
// share-safe, store/requires), empty when absent.
func readRequires(d dirs) (store.Requirements, error) {
	req := store.NewRequirements()
	for _, p := range []string{filepath.Join(d.hg, "requires"), filepath.Join(d.store, "requires")} {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return req, err
		}
		req = req.Union(store.ParseRequirements(data))
	}
	return req, nil
}

// tryRead is vfs.tryread: the file's content, nil when it is absent.
func tryRead(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// writeJournal writes the journal.* files (localrepo._writejournal).
// It reports whether journal.dirstate was made.
func writeJournal(d dirs, dirstateV2 bool, bookmarksDir, desc string, changelogLen int) (dirstateSaved bool, err error) {
	dirstateSaved, err = saveDirstate(d, dirstateV2)
	if err != nil {
		return false, err
	}
	branch, err := tryRead(filepath.Join(d.hg, "branch"))
	if err != nil {
		return dirstateSaved, err
	}
	// dirstate._branch: strip() or "default".
	branch = bytes.Trim(branch, " \t\n\r\v\f")
	if len(branch) == 0 {
		branch = []byte("default")
	}
	if err := os.WriteFile(filepath.Join(d.hg, "journal.branch"), branch, 0o666); err != nil {
		return dirstateSaved, err
	}
	descData := fmt.Appendf(nil, "%d\n%s\n", changelogLen, desc)
	if err := os.WriteFile(filepath.Join(d.hg, "journal.desc"), descData, 0o666); err != nil {
		return dirstateSaved, err
	}
	bm, err := tryRead(filepath.Join(bookmarksDir, "bookmarks"))
	if err != nil {
		return dirstateSaved, err
	}
	if err := os.WriteFile(filepath.Join(bookmarksDir, "journal.bookmarks"), bm, 0o666); err != nil {
		return dirstateSaved, err
	}
	pr, err := tryRead(filepath.Join(d.store, "phaseroots"))
	if err != nil {
		return dirstateSaved, err
	}
	return dirstateSaved, os.WriteFile(filepath.Join(d.store, "journal.phaseroots"), pr, 0o666)
}

// saveDirstate is dirstate.savebackup(None, "journal.dirstate"): a hard
// link of .hg/dirstate (hg replaces the dirstate atomically, so the link
// keeps the old content) and, with dirstate-v2, of its data file. hg
// writes an empty dirstate first when there is none; hgfs does not touch
// the working directory and makes no backup then (rollback then deletes
// the dirstate, which did not exist).
func saveDirstate(d dirs, v2 bool) (bool, error) {
	src := filepath.Join(d.hg, "dirstate")
	if !exists(src) {
		return false, nil
	}
	if err := copyFile(src, filepath.Join(d.hg, "journal.dirstate"), true); err != nil {
		return false, err
	}
	if !v2 {
		return true, nil
	}
	docket, err := os.ReadFile(src)
	if err != nil {
		return true, err
	}
	data, ok := dirstateV2DataFile(docket)
	if !ok {
		return true, nil // no data file yet (docket without uuid)
	}
	if err := copyFile(filepath.Join(d.hg, data), filepath.Join(d.hg, "journal.dirstate.v2-data"), true); err != nil {
		return true, err
	}
	return true, nil
}

// dirstateV2DataFile returns the data file a dirstate-v2 docket names
// (dirstate.ParseDocket), if any.
func dirstateV2DataFile(docket []byte) (string, bool) {
	dk, err := dirstate.ParseDocket(docket)
	if err != nil || dk.ID == "" {
		return "", false
	}
	return dk.DataFile(), true
}

// restoreDirstate is the failure half of localrepo.transaction's
// releasefn: dirstate.restorebackup(None, "journal.dirstate"). When the
// backup is the dirstate itself (a hard link, nothing rewrote it), the
// backup is just removed, as hg does.
func restoreDirstate(d dirs) error {
	bk := filepath.Join(d.hg, "journal.dirstate")
	cur := filepath.Join(d.hg, "dirstate")
	// The data file first: the docket backup names it.
	if docket, err := os.ReadFile(bk); err == nil {
		if data, ok := dirstateV2DataFile(docket); ok {
			if err := restoreOrDrop(filepath.Join(d.hg, "journal.dirstate.v2-data"), filepath.Join(d.hg, data)); err != nil {
				return err
			}
		}
	}
	return restoreOrDrop(bk, cur)
}

// restoreOrDrop renames backup over target, or removes backup when it
// is target already (a hard link).
func restoreOrDrop(backup, target string) error {
	bst, err := os.Stat(backup)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if cst, err := os.Stat(target); err == nil && os.SameFile(bst, cst) {
		return os.Remove(backup)
	}
	return os.Rename(backup, target)
}
