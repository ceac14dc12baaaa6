package txn

// Resolving journal names to paths. hg journals store files by their
// unencoded ("logical") store paths, "data/Foo.txt.i", and its store
// vfs encodes them (store.py _fncachevfs.join, filtervfs): the journal
// of a fncache store never holds an on-disk name. Location "plain"
// names are .hg paths, unencoded.
//
// Journal files are untrusted on recovery (a repository can come from
// anywhere): every name is checked before any file is touched, so that
// a hostile journal can only truncate, delete or overwrite files hg
// itself journals, inside the store (or the few .hg files hg journals
// there).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// dirs are the two directories of a transaction.
type dirs struct {
	hg     string       // .hg (location "plain")
	store  string       // the store (location ""); .hg itself for a store-less repository
	layout store.Layout // how store names are encoded on disk
}

// protected are top-level names of .hg (and so of a store-less store)
// that no journal entry may name: files hg never journals whose loss or
// truncation would change what the repository is or who may write it.
var protected = map[string]bool{
	"hgrc": true, "requires": true, "sharedpath": true, "lock": true,
	"wlock": true, "store": true, "cache": true, "wcache": true,
	"journal": true, "journal.backupfiles": true,
}

// plainAllowed reports whether a location "plain" entry may name f: hg
// journals only the bookmarks and dirstate files there (and their
// journal.* backups and .pending temporaries), all directly in .hg.
func plainAllowed(f string) bool {
	if strings.Contains(f, "/") {
		return false
	}
	return f == "bookmarks" || f == "bookmarks.current" || f == "bookmarks.pending" ||
		f == "dirstate" || strings.HasPrefix(f, "dirstate.") ||
		strings.HasPrefix(f, "journal.") || strings.HasPrefix(f, "undo.")
}

// resolve checks an untrusted logical name of location loc and returns
// its on-disk path.
func (d dirs) resolve(loc Location, name string) (string, error) {
	if err := store.ValidateName(name); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadJournal, err)
	}
	var base string
	switch loc {
	case Store, storeAlias:
		base = d.store
		enc := d.layout.Encode(name)
		if err := store.ValidateName(enc); err != nil {
			return "", fmt.Errorf("%w: %q encodes to a bad name: %v", ErrBadJournal, name, err)
		}
		name = enc
	case Plain:
		if !plainAllowed(name) {
			return "", fmt.Errorf("%w: %q in .hg is not a file transactions back up", ErrBadJournal, name)
		}
		base = d.hg
	default:
		return "", fmt.Errorf("%w: unknown location %q for %q", ErrBadJournal, loc, name)
	}
	top, _, _ := strings.Cut(name, "/")
	if protected[top] && (base == d.hg || !strings.Contains(name, "/")) {
		return "", fmt.Errorf("%w: %q is not a file a transaction may change", ErrBadJournal, name)
	}
	// No component below base may be a symbolic link: a link to / would
	// let "data/x.i" reach any file. (The check races with a concurrent
	// writer of the store, which the store lock excludes.)
	p := base
	comps := strings.Split(name, "/")
	for i, c := range comps {
		p = filepath.Join(p, c)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%w: %q: %s is a symbolic link", ErrBadJournal, name, p)
		}
		if i < len(comps)-1 && !st.IsDir() {
			return "", fmt.Errorf("%w: %q: %s is not a directory", ErrBadJournal, name, p)
		}
		if i == len(comps)-1 && !st.Mode().IsRegular() {
			return "", fmt.Errorf("%w: %q: %s is not a regular file", ErrBadJournal, name, p)
		}
	}
	return filepath.Join(base, filepath.FromSlash(name)), nil
}
