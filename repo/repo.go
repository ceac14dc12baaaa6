package repo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// ErrNoFile means a path has no filelog in the store (hg: "no such file").
var ErrNoFile = errors.New("no such file")

// Repo is an open repository: its store and the revlogs every command
// needs. The manifest log is opened when first used, as hg's is: a
// command that reads changesets only (log) works on a repository whose
// manifest log is damaged.
type Repo struct {
	Root  string // "" for a repository from OpenFS
	Store *store.Store

	hg fs.FS // the .hg directory

	cl     *revlog.Revlog
	mlOnce sync.Once
	ml     *revlog.Revlog
	mlErr  error

	metaOnce sync.Once
	meta     *meta
	metaErr  error

	branchOnce sync.Once
	orphanOnce sync.Once
	orphans    []bool
	branches   []Branch
	branchErr  error
}

// Open opens the repository whose root (the directory holding .hg) is root.
func Open(root string) (*Repo, error) {
	st, err := store.Open(root)
	if err != nil {
		return nil, err
	}
	return openRevlogs(&Repo{Root: root, Store: st, hg: os.DirFS(filepath.Join(st.Root, ".hg"))})
}

// OpenFS opens the repository whose .hg directory is hg: os.DirFS of one,
// or a mounted cache's view. Shared repositories are refused
// (store.ErrShared).
func OpenFS(hg fs.FS) (*Repo, error) {
	st, err := store.OpenFS(hg)
	if err != nil {
		return nil, err
	}
	return openRevlogs(&Repo{Store: st, hg: hg})
}

func openRevlogs(r *Repo) (*Repo, error) {
	st := r.Store
	var err error
	if r.cl, err = openOrEmpty(st, "00changelog.i"); err != nil {
		return nil, fmt.Errorf("changelog: %w", err)
	}
	return r, nil
}

// openOrEmpty opens a store revlog; a missing one is empty, as in a
// repository with no commits yet.
func openOrEmpty(st *store.Store, name string) (*revlog.Revlog, error) {
	rl, err := revlog.Open(st.FS(), st.Encode(name))
	if errors.Is(err, fs.ErrNotExist) {
		return revlog.FromBytes(name, nil, nil)
	}
	return rl, err
}

// Close releases the changelog and manifest log.
func (r *Repo) Close() error {
	r.mlOnce.Do(func() {}) // none is opened after this
	err := r.cl.Close()
	if r.ml != nil {
		err = errors.Join(err, r.ml.Close())
	}
	return err
}

// Changelog returns the changelog revlog.
func (r *Repo) Changelog() *revlog.Revlog { return r.cl }

// Manifestlog returns the (flat) manifest revlog, opened on first use;
// a missing one is empty.
func (r *Repo) Manifestlog() (*revlog.Revlog, error) {
	r.mlOnce.Do(func() {
		// Its errors name 00manifest.i (or 00manifest, hg's way).
		r.ml, r.mlErr = openOrEmpty(r.Store, "00manifest.i")
	})
	return r.ml, r.mlErr
}

// File opens the filelog of path (a repository-relative, slash-separated
// path). A path with no filelog gives an error wrapping ErrNoFile. The
// caller closes the result.
func (r *Repo) File(path string) (*revlog.Revlog, error) {
	return r.FileWithIndex(path, nil)
}

// FileWithIndex is File with the filelog's index already read by the
// caller (index nil: File reads it), from the store directory's
// r.Store.FilelogIndex(path).
func (r *Repo) FileWithIndex(path string, index []byte) (*revlog.Revlog, error) {
	name := r.Store.FilelogIndex(path)
	// The data file's name is encoded on its own: hashed names (dh/)
	// digest the whole logical name, suffix included.
	data := r.Store.Encode("data/" + path + ".d")
	var rl *revlog.Revlog
	var err error
	if index != nil {
		rl, err = revlog.OpenWithIndex(r.Store.FS(), name, data, index)
	} else {
		rl, err = revlog.OpenWithData(r.Store.FS(), name, data)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, ErrNoFile)
		}
		// hg names a filelog by its tracked path (filelog display_id).
		if he := (*revlog.HeaderError)(nil); errors.As(err, &he) {
			he.Revlog = path
		}
		return nil, err
	}
	return rl, nil
}

// rev finds a changeset by node; the null node is not a changeset here.
func (r *Repo) rev(node revlog.Node) (int, bool) {
	rev, ok := r.cl.Rev(node)
	if !ok || rev < 0 || rev >= r.cl.Len() {
		return 0, false
	}
	return rev, true
}

// Node returns the node of changelog rev (NullNode for -1).
func (r *Repo) Node(rev int) revlog.Node {
	if rev < 0 || rev >= r.cl.Len() {
		return revlog.NullNode
	}
	return r.cl.Entry(rev).Node
}

// Parents returns the changelog parents of rev (NullRev for none).
func (r *Repo) Parents(rev int) (p1, p2 int) {
	if rev < 0 || rev >= r.cl.Len() {
		return revlog.NullRev, revlog.NullRev
	}
	e := r.cl.Entry(rev)
	return e.P1, e.P2
}

// Changeset reads and parses changeset rev. The null revision is an empty
// changeset, as hg presents it.
func (r *Repo) Changeset(rev int) (*revlog.Changeset, error) {
	if rev == revlog.NullRev {
		return &revlog.Changeset{DateText: "0 0", Extra: map[string]string{}}, nil
	}
	if rev < 0 || rev >= r.cl.Len() {
		return nil, fmt.Errorf("changelog: revision %d out of range", rev)
	}
	text, err := r.cl.Revision(rev)
	if err != nil {
		return nil, err
	}
	c, err := revlog.ParseChangeset(text)
	if err != nil {
		return nil, fmt.Errorf("changelog revision %d: %w", rev, err)
	}
	return c, nil
}

// ManifestRev returns the manifest log revision a changeset points at, or
// NullRev for the null manifest.
func (r *Repo) ManifestRev(c *revlog.Changeset) (int, error) {
	return r.manifestRev(c.Manifest)
}

func (r *Repo) manifestRev(node revlog.Node) (int, error) {
	if node == revlog.NullNode {
		return revlog.NullRev, nil
	}
	ml, err := r.Manifestlog()
	if err != nil {
		return 0, err
	}
	mrev, ok := ml.Rev(node)
	if !ok {
		return 0, fmt.Errorf("manifest %s not found: %w", node, revlog.ErrNotFound)
	}
	return mrev, nil
}

// Manifest returns the manifest of changeset rev, sorted by path.
func (r *Repo) Manifest(rev int) ([]revlog.ManifestEntry, error) {
	c, err := r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	return r.ReadManifest(c.Manifest)
}

// ReadManifest returns the manifest whose node is node (nil for the null
// manifest), sorted by path.
func (r *Repo) ReadManifest(node revlog.Node) ([]revlog.ManifestEntry, error) {
	text, err := r.manifestText(node)
	if err != nil || text == nil {
		return nil, err
	}
	m, err := revlog.ParseManifest(text)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", node, err)
	}
	return m, nil
}

// FindInManifest finds path in the manifest whose node is node without
// parsing the rest of it (revlog.FindManifestEntry).
func (r *Repo) FindInManifest(node revlog.Node, path string) (revlog.ManifestEntry, bool, error) {
	text, err := r.manifestText(node)
	if err != nil || text == nil {
		return revlog.ManifestEntry{}, false, err
	}
	e, ok, err := revlog.FindManifestEntry(text, path)
	if err != nil {
		return revlog.ManifestEntry{}, false, fmt.Errorf("manifest %s: %w", node, err)
	}
	return e, ok, nil
}

// manifestText is the text of the manifest whose node is node, nil for
// the null manifest.
func (r *Repo) manifestText(node revlog.Node) ([]byte, error) {
	mrev, err := r.manifestRev(node)
	if err != nil || mrev == revlog.NullRev {
		return nil, err
	}
	ml, err := r.Manifestlog()
	if err != nil {
		return nil, err
	}
	return ml.Revision(mrev)
}

// FindEntry finds path in a manifest as returned by Manifest.
func FindEntry(m []revlog.ManifestEntry, path string) (revlog.ManifestEntry, bool) {
	i := sort.Search(len(m), func(i int) bool { return m[i].Path >= path })
	if i < len(m) && m[i].Path == path {
		return m[i], true
	}
	return revlog.ManifestEntry{}, false
}

// FileData returns the contents of e as hg cat prints them: the filelog
// revision with any copy metadata header removed.
func (r *Repo) FileData(e revlog.ManifestEntry) ([]byte, error) {
	fl, err := r.File(e.Path)
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	return FileContent(fl, e)
}

// FileContent returns the contents of e from its filelog fl, however
// opened: the revision e.Node names, hash checked, without its copy
// metadata header (as hg's filelog.read). Errors name e's path and node.
func FileContent(fl *revlog.Revlog, e revlog.ManifestEntry) ([]byte, error) {
	frev, ok := fl.Rev(e.Node)
	if !ok {
		return nil, fmt.Errorf("%s@%s: %w", e.Path, e.Node.Short(), revlog.ErrNotFound)
	}
	text, err := fl.Revision(frev)
	if err != nil {
		return nil, err
	}
	_, body, err := revlog.ParseFileMeta(text)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", e.Path, e.Node.Short(), err)
	}
	return body, nil
}

// SameFileData reports whether data is the content of e in its filelog
// fl, as hg's filelog.cmp (storageutil.filedataequivalent) decides it:
// data hashed with the revision's parents (behind an empty metadata
// header if it starts with one's marker) gives e's node; when it does
// not (copy metadata, censored revisions), the revision is reconstructed
// and compared.
func SameFileData(fl *revlog.Revlog, e revlog.ManifestEntry, data []byte) (bool, error) {
	frev, ok := fl.Rev(e.Node)
	if !ok {
		return false, fmt.Errorf("%s@%s: %w", e.Path, e.Node.Short(), revlog.ErrNotFound)
	}
	text := data
	if bytes.HasPrefix(data, []byte("\x01\n")) {
		text = append([]byte("\x01\n\x01\n"), data...)
	}
	p1, p2 := fl.Parents(frev)
	if revlog.HashRevision(text, fl.Node(p1), fl.Node(p2)) == e.Node {
		return true, nil
	}
	want, err := FileContent(fl, e)
	if err != nil {
		return false, err
	}
	return bytes.Equal(want, data), nil
}
