package hgview

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/internal/sysio"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// Errors besides the syscall.Errno values the tree operations return.
var (
	// ErrUnsupported means the repository cannot be shown (a share).
	ErrUnsupported = errors.New("unsupported repository")
	// ErrUnknownRevision means no changeset answers to a symbol (or a
	// hidden one does); it is repo's.
	ErrUnknownRevision = repo.ErrUnknownRevision
	// ErrAmbiguous means a node prefix matches several changesets; it is
	// repo's.
	ErrAmbiguous = repo.ErrAmbiguous
)

// Inode numbers. The mount reserves the upper half of the 64-bit space
// for virtual nodes; below RootIno+16 are fixed directories and files,
// every other node gets a hash of its identity in the upper quarter, so a
// path names the same inode for as long as it shows the same thing.
const (
	DefaultRootIno = 1<<63 + 1
	hashedBase     = 1<<63 | 1<<62
)

// Fixed inode offsets from the root (1 is left for the mount's "stats").
const (
	offRev = 2 + iota
	offRevlogs
	offLog
	offHeads
	offBookmarks
	offTags
	offBranches
	offTagDir
	offBookmarkDir
	offBranchDir
)

// textFiles are the generated text files of the root, in listing order.
var textFiles = []struct {
	name string
	off  uint64
}{{"bookmarks", offBookmarks}, {"branches", offBranches}, {"heads", offHeads}, {"log", offLog}, {"tags", offTags}}

// Options tune a View.
type Options struct {
	// CacheBytes bounds the memory kept for reconstructed file texts,
	// revlog revisions and parsed manifests (default 64 MiB).
	CacheBytes int64
	// RootIno is the inode number of the view's root (default
	// DefaultRootIno). Every other inode number is above it.
	RootIno uint64
}

// View is the virtual tree of one repository. It is safe for concurrent
// use.
type View struct {
	hg     fs.FS
	st     fs.FS
	layout store.Layout
	// storeDir is the store directory on disk, "" when the repository
	// is not a directory (a cache's): the prefetcher's batched reads
	// need it.
	storeDir string
	names    *dataNames
	opt      Options
	start    time.Time
	cache    *lru
	root     *Node

	mu   sync.Mutex
	snap *snapshot

	tableMu sync.Mutex
	table   map[uint64]*tableEntry

	prefetch prefetcher

	flightMu sync.Mutex
	flight   map[string]*flight // reconstructions in progress, by cache key
}

type tableEntry struct {
	n    *Node
	refs uint64
}

// Open opens the view of the repository whose .hg directory is hg.
func Open(hg fs.FS, opt Options) (*View, error) {
	if opt.CacheBytes <= 0 {
		opt.CacheBytes = 64 << 20
	}
	if opt.RootIno == 0 {
		opt.RootIno = DefaultRootIno
	}
	st, err := openStore(hg)
	if err != nil {
		return nil, err
	}
	v := &View{hg: hg, st: st.FS(), layout: st.Layout, names: &dataNames{st: st}, opt: opt, start: time.Now(), cache: newLRU(opt.CacheBytes), table: map[uint64]*tableEntry{}}
	if d, ok := hg.(*sysio.DirFS); ok {
		v.storeDir = d.Dir()
		if st.Layout != store.LayoutBasic {
			v.storeDir = filepath.Join(d.Dir(), "store")
		}
	}
	v.root = &Node{Ino: opt.RootIno, kind: kindRoot}
	s, err := v.current()
	if err != nil {
		return nil, err
	}
	v.release(s)
	return v, nil
}

// OpenDir opens the view of the repository at root (the directory holding
// .hg).
func OpenDir(root string, opt Options) (*View, error) {
	hg := filepath.Join(root, ".hg")
	if fi, err := os.Stat(hg); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a repository (no .hg directory)", root)
	}
	return Open(sysio.NewDirFS(hg, maxReadFile), opt)
}

// maxReadFile bounds what a view reads whole into memory (every revlog
// open reads its index whole): far above any revlog index a view opens
// (the changelog index of a million changesets is 64 MiB), and refused
// rather than allocated beyond, as EFBIG.
const maxReadFile = 1 << 30

// Close releases the open revlogs.
func (v *View) Close() error {
	v.stopPrefetch()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.snap != nil {
		v.snap.retired = true
		if v.snap.refs == 0 {
			v.snap.close()
		}
		v.snap = nil
	}
	return nil
}

// current returns the snapshot matching the repository now, reopening
// the changelog if it or a names file changed since.
func (v *View) current() (*snapshot, error) {
	key := currentKey(v.hg, v.st)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.snap != nil && v.snap.key == key {
		v.snap.refs++
		return v.snap, nil
	}
	s, err := openSnapshot(v.hg, key)
	if err != nil {
		return nil, err
	}
	if old := v.snap; old != nil {
		// Readers still using the old snapshot close it when done.
		old.retired = true
		if old.refs == 0 {
			old.close()
		}
	}
	v.snap = s
	s.refs++
	return s, nil
}

// latest is current without looking for changes: for reading things
// named by node, which every later snapshot holds too.
func (v *View) latest() (*snapshot, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.snap == nil {
		return nil, fs.ErrClosed
	}
	v.snap.refs++
	return v.snap, nil
}

// release ends a use of a snapshot from current or latest.
func (v *View) release(s *snapshot) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s.refs--
	if s.refs == 0 && s.retired {
		s.close()
	}
}

// Kind is what a node shows.
type Kind int

const (
	kindRoot        Kind = iota // .hgfs
	kindRevDir                  // .hgfs/rev
	kindChangeset               // .hgfs/rev/REV
	kindTreeDir                 // a directory inside a changeset
	kindTreeFile                // a file or symlink inside a changeset
	kindRevlogsDir              // .hgfs/revlogs and store directories below it
	kindRevlog                  // .hgfs/revlogs/STOREPATH (a .i file)
	kindRevlogIndex             // .hgfs/revlogs/STOREPATH/index
	kindRevlogRev               // .hgfs/revlogs/STOREPATH/N
	kindText                    // .hgfs/log, heads, bookmarks, tags, branches
	kindNamesDir                // .hgfs/tag, bookmark, branch and directories of names with slashes (names.go)
	kindNameLink                // .hgfs/tag/NAME...: a link to rev/FULLNODE
)

// Node is one file or directory of the view. Nodes are immutable values;
// a changeset's nodes are bound to the changeset their REV named when it
// was looked up.
type Node struct {
	Ino  uint64
	kind Kind
	path string // tree: path in the manifest ("" for the changeset root); revlogs: store path; text: name
	cs   *changeset
	rev  int                  // kindRevlogRev
	ent  revlog.ManifestEntry // kindTreeFile
	// ns is the namespace of a name node (tag, bookmark, branch); path
	// is then the name or the directory's prefix, target a link's.
	ns, target string
}

// changeset is a resolved .hgfs/rev/REV.
type changeset struct {
	sym      string
	rev      int
	node     revlog.Node
	hex      string // node.String(), which every inode number in its tree hashes
	manifest revlog.Node
	date     time.Time
	fixed    bool // REV is a full node: the name can never move
}

// Attr is a node's attributes.
type Attr struct {
	Ino   uint64
	Mode  uint32 // syscall.S_IFDIR, S_IFREG or S_IFLNK | permissions
	Nlink uint32
	Size  uint64
	Mtime time.Time
	// Fixed means the node's name binding, attributes and content never
	// change while the repository only grows (no strip): kernels may
	// cache them for long.
	Fixed bool
}

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name string
	Ino  uint64
	Mode uint32 // type bits only

	node *Node // what Lookup of Name finds, where the listing made it
}

// Node is what Lookup(dir, e.Name) would find, for an entry of a
// changeset's tree (nil elsewhere): an adapter answering a listing with
// attributes saves a lookup per entry.
func (e DirEntry) Node() *Node { return e.node }

// Root is the view's top directory (.hgfs).
func (v *View) Root() *Node { return v.root }

// IsDir reports whether n is a directory.
func (n *Node) IsDir() bool {
	switch n.kind {
	case kindTreeFile, kindRevlogIndex, kindRevlogRev, kindText, kindNameLink:
		return false
	}
	return true
}

// IsLink reports whether n is a symbolic link: a name's (names.go) or a
// changeset's symlink.
func (n *Node) IsLink() bool {
	return n.kind == kindNameLink || n.kind == kindTreeFile && n.ent.Flags == "l"
}

// ListsFixed reports whether n is a directory of a changeset's tree
// (rev/REV or a directory inside it): its entries are Fixed and cheap to
// look up, so an adapter may answer a listing with every entry's node
// and attributes (READDIRPLUS) and spare the kernel one LOOKUP per
// name. That reconstructs the files listed (GetAttr needs their size),
// which a tree walk (grep -r, diff -r, tar) does anyway; the revision
// directories of revlogs are not included, since their revisions can
// be large and a listing of them rarely precedes reading them all.
func (n *Node) ListsFixed() bool {
	return n.kind == kindChangeset || n.kind == kindTreeDir
}

// Fixed reports whether n and its content never change (see Attr.Fixed).
func (n *Node) Fixed() bool {
	switch n.kind {
	case kindChangeset:
		return n.cs.fixed
	case kindTreeDir, kindTreeFile, kindRevlogRev:
		return true
	}
	return false
}

func hashIno(parts ...string) uint64 {
	// FNV-1a (hash/fnv's New64a) over each part and a 0 byte, inline:
	// the hash.Hash and the []byte conversions allocated on every
	// lookup of a walk.
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= prime64
		}
		h *= prime64 // the 0 byte
	}
	// ^0 is reserved by go-fuse (and the kernel): fold it away.
	return hashedBase | h%(1<<62-1)
}

func (v *View) fixed(off uint64, kind Kind, path string) *Node {
	return &Node{Ino: v.opt.RootIno + off, kind: kind, path: path}
}

// nameRoot is the name directory of namespace ns (names.go).
func (v *View) nameRoot(off uint64, ns string) *Node {
	return &Node{Ino: v.opt.RootIno + off, kind: kindNamesDir, ns: ns}
}

// Lookup finds name in directory dir. A missing name is syscall.ENOENT.
func (v *View) Lookup(dir *Node, name string) (*Node, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return nil, syscall.ENOENT
	}
	switch dir.kind {
	case kindRoot:
		switch name {
		case "rev":
			return v.fixed(offRev, kindRevDir, ""), nil
		case "revlogs":
			return v.fixed(offRevlogs, kindRevlogsDir, ""), nil
		}
		for _, t := range textFiles {
			if t.name == name {
				return v.fixed(t.off, kindText, name), nil
			}
		}
		for _, d := range nameDirs {
			if d.name == name {
				return v.nameRoot(d.off, d.name), nil
			}
		}
		return nil, syscall.ENOENT
	case kindNamesDir:
		return v.lookupName(dir, name)
	case kindRevDir:
		return v.lookupChangeset(name)
	case kindChangeset, kindTreeDir:
		return v.lookupTree(dir, name)
	case kindRevlogsDir:
		return v.lookupStore(dir, name)
	case kindRevlog:
		return v.lookupRevlog(dir, name)
	}
	return nil, syscall.ENOTDIR
}

func (v *View) lookupChangeset(sym string) (*Node, error) {
	s, err := v.current()
	if err != nil {
		return nil, err
	}
	defer v.release(s)
	rev, err := s.lookup(sym)
	if errors.Is(err, ErrUnknownRevision) || errors.Is(err, ErrAmbiguous) {
		return nil, syscall.ENOENT
	}
	if err != nil {
		return nil, err
	}
	c, err := s.r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	cs := &changeset{sym: sym, rev: rev, node: s.r.Node(rev), manifest: c.Manifest, date: time.Unix(c.Time, 0)}
	cs.hex = cs.node.String()
	cs.fixed = len(sym) == 40 && sym == cs.hex
	return &Node{Ino: hashIno("cs", sym, cs.hex), kind: kindChangeset, cs: cs}, nil
}

// ChangesetManifest returns the manifest of changeset node, parsed and
// cached as a changeset's tree under rev/ is, and the changeset's
// branch: what a mount's daemon needs to move a working copy from one
// changeset to another (package mount). A node the repository does not
// have is ErrUnknownRevision.
func (v *View) ChangesetManifest(node revlog.Node) ([]revlog.ManifestEntry, string, error) {
	s, err := v.current()
	if err != nil {
		return nil, "", err
	}
	defer v.release(s)
	rev, ok := s.rev(node)
	if !ok {
		return nil, "", fmt.Errorf("%w: %s", ErrUnknownRevision, node)
	}
	// What a changeset names never changes: its manifest and branch are
	// kept (a changeset's text lists every file it touched: the first
	// of the 20,000-file store's, 20,000 names, took a decompression, a
	// hash check and a parse at every update from it).
	key := "h" + string(node[:])
	head, ok := v.cache.get(key)
	if !ok {
		c, err := s.r.Changeset(rev)
		if err != nil {
			return nil, "", err
		}
		h := csHead{manifest: c.Manifest, branch: c.Branch()}
		v.cache.add(key, h, int64(len(key)+len(h.branch)+64))
		head = h
	}
	h := head.(csHead)
	m, err := v.manifest(&changeset{manifest: h.manifest})
	return m, h.branch, err
}

// csHead is what ChangesetManifest keeps of a changeset.
type csHead struct {
	manifest revlog.Node
	branch   string
}

// manifest returns the parsed manifest of a changeset, cached.
func (v *View) manifest(cs *changeset) ([]revlog.ManifestEntry, error) {
	if cs.manifest.IsNull() {
		return nil, nil
	}
	key := "m" + string(cs.manifest[:])
	if m, ok := v.cache.get(key); ok {
		return m.([]revlog.ManifestEntry), nil
	}
	s, err := v.latest()
	if err != nil {
		return nil, err
	}
	defer v.release(s)
	m, err := s.r.ReadManifest(cs.manifest)
	if err != nil {
		return nil, err
	}
	// Each entry costs its path, a node and the slice header; the text
	// it was parsed from is counted too (its line: path, NUL, 40 hex
	// digits, flags, newline).
	cost := int64(len(m)) * 48
	for i := range m {
		cost += int64(len(m[i].Path) + 42 + len(m[i].Flags))
	}
	v.cache.add(key, m, cost)
	return m, nil
}

func childPath(dir *Node, name string) string {
	if dir.path == "" {
		return name
	}
	return dir.path + "/" + name
}

func (v *View) lookupTree(dir *Node, name string) (*Node, error) {
	m, err := v.manifest(dir.cs)
	if err != nil {
		return nil, err
	}
	p := childPath(dir, name)
	i := sort.Search(len(m), func(i int) bool { return m[i].Path >= p })
	if i < len(m) && m[i].Path == p {
		return treeFile(dir.cs, m[i]), nil
	}
	// "p/" sorts after "p" and after "p" followed by bytes below '/'.
	j := sort.Search(len(m), func(i int) bool { return m[i].Path >= p+"/" })
	if j < len(m) && strings.HasPrefix(m[j].Path, p+"/") {
		return treeDir(dir.cs, p), nil
	}
	return nil, syscall.ENOENT
}

// storeName validates a name found in a store directory listing or asked
// for by lookup: revlog index files (not transaction leftovers) and, at
// the top, the directories revlogs live in.
func storeDirAllowed(parent, name string) bool {
	if parent == "" {
		return name == "data" || name == "meta" || name == "dh"
	}
	return true
}

func revlogName(name string) bool {
	return strings.HasSuffix(name, ".i") && !strings.HasPrefix(name, "undo.") && !strings.HasPrefix(name, "journal.")
}

func (v *View) lookupStore(dir *Node, name string) (*Node, error) {
	p := childPath(dir, name)
	fi, err := fs.Stat(v.st, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, syscall.ENOENT
	}
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir() && storeDirAllowed(dir.path, name):
		return &Node{Ino: hashIno("sd", p), kind: kindRevlogsDir, path: p}, nil
	case fi.Mode().IsRegular() && revlogName(name):
		return &Node{Ino: hashIno("rl", p), kind: kindRevlog, path: p}, nil
	}
	return nil, syscall.ENOENT
}

func (v *View) lookupRevlog(dir *Node, name string) (*Node, error) {
	if name == "index" {
		return &Node{Ino: hashIno("ri", dir.path), kind: kindRevlogIndex, path: dir.path}, nil
	}
	rev, err := strconv.Atoi(name)
	if err != nil || strconv.Itoa(rev) != name || rev < 0 {
		return nil, syscall.ENOENT
	}
	rl, err := v.openRevlog(dir.path)
	if err != nil {
		return nil, err
	}
	defer rl.Close()
	if rev >= rl.Len() {
		return nil, syscall.ENOENT
	}
	return &Node{Ino: hashIno("rr", dir.path, name), kind: kindRevlogRev, path: dir.path, rev: rev}, nil
}

// ReadDir lists directory dir (without "." and ".."), sorted by name
// except .hgfs/rev, which lists changeset numbers in increasing order.
func (v *View) ReadDir(dir *Node) ([]DirEntry, error) {
	switch dir.kind {
	case kindRoot:
		out := []DirEntry{
			{Name: "rev", Ino: v.opt.RootIno + offRev, Mode: syscall.S_IFDIR},
			{Name: "revlogs", Ino: v.opt.RootIno + offRevlogs, Mode: syscall.S_IFDIR},
		}
		for _, t := range textFiles {
			out = append(out, DirEntry{Name: t.name, Ino: v.opt.RootIno + t.off, Mode: syscall.S_IFREG})
		}
		for _, d := range nameDirs {
			out = append(out, DirEntry{Name: d.name, Ino: v.opt.RootIno + d.off, Mode: syscall.S_IFDIR})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	case kindRevDir:
		s, err := v.current()
		if err != nil {
			return nil, err
		}
		defer v.release(s)
		vis, err := s.r.Visible()
		if err != nil {
			return nil, err
		}
		out := make([]DirEntry, 0, len(vis))
		for _, rev := range vis {
			name := strconv.Itoa(rev)
			out = append(out, DirEntry{Name: name, Ino: hashIno("cs", name, s.r.Node(rev).String()), Mode: syscall.S_IFDIR})
		}
		return out, nil
	case kindChangeset, kindTreeDir:
		return v.readTree(dir)
	case kindNamesDir:
		return v.readNames(dir)
	case kindRevlogsDir:
		return v.readStore(dir)
	case kindRevlog:
		rl, err := v.openRevlog(dir.path)
		if err != nil {
			return nil, err
		}
		defer rl.Close()
		out := make([]DirEntry, 0, rl.Len()+1)
		for rev := 0; rev < rl.Len(); rev++ {
			name := strconv.Itoa(rev)
			out = append(out, DirEntry{Name: name, Ino: hashIno("rr", dir.path, name), Mode: syscall.S_IFREG})
		}
		out = append(out, DirEntry{Name: "index", Ino: hashIno("ri", dir.path), Mode: syscall.S_IFREG})
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	}
	return nil, syscall.ENOTDIR
}

// treeFile and treeDir are the nodes of a changeset's tree, as lookups
// and listings make them.
func treeFile(cs *changeset, e revlog.ManifestEntry) *Node {
	return &Node{Ino: hashIno("t", cs.sym, cs.hex, e.Path), kind: kindTreeFile, cs: cs, path: e.Path, ent: e}
}

func treeDir(cs *changeset, path string) *Node {
	return &Node{Ino: hashIno("t", cs.sym, cs.hex, path), kind: kindTreeDir, cs: cs, path: path}
}

func (v *View) readTree(dir *Node) ([]DirEntry, error) {
	m, err := v.manifest(dir.cs)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if dir.path != "" {
		prefix = dir.path + "/"
	}
	var out []DirEntry
	i := sort.Search(len(m), func(i int) bool { return m[i].Path >= prefix })
	for i < len(m) && strings.HasPrefix(m[i].Path, prefix) {
		rest := m[i].Path[len(prefix):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			sub := prefix + rest[:j]
			n := treeDir(dir.cs, sub)
			out = append(out, DirEntry{Name: rest[:j], Ino: n.Ino, Mode: syscall.S_IFDIR, node: n})
			i = sort.Search(len(m), func(i int) bool { return m[i].Path >= sub+"0" }) // '0' follows '/'
			continue
		}
		mode := uint32(syscall.S_IFREG)
		if m[i].Flags == "l" {
			mode = syscall.S_IFLNK
		}
		n := treeFile(dir.cs, m[i])
		out = append(out, DirEntry{Name: rest, Ino: n.Ino, Mode: mode, node: n})
		i++
	}
	// Manifest order puts "a.txt" before "a/"; listings sort by name.
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (v *View) readStore(dir *Node) ([]DirEntry, error) {
	p := dir.path
	if p == "" {
		p = "."
	}
	ents, err := fs.ReadDir(v.st, p)
	if err != nil {
		return nil, err
	}
	var out []DirEntry
	for _, e := range ents {
		cp := childPath(dir, e.Name())
		switch {
		case e.IsDir() && storeDirAllowed(dir.path, e.Name()):
			out = append(out, DirEntry{Name: e.Name(), Ino: hashIno("sd", cp), Mode: syscall.S_IFDIR})
		case e.Type().IsRegular() && revlogName(e.Name()):
			out = append(out, DirEntry{Name: e.Name(), Ino: hashIno("rl", cp), Mode: syscall.S_IFDIR})
		}
	}
	return out, nil
}

// GetAttr returns n's attributes. A file's size is that of its content,
// which is reconstructed (and cached) to know it.
func (v *View) GetAttr(n *Node) (Attr, error) {
	a, _, err := v.GetAttrContent(n)
	return a, err
}

// GetAttrContent is GetAttr that also returns the content the size came
// from (nil for a directory), for a caller about to use both.
func (v *View) GetAttrContent(n *Node) (Attr, []byte, error) {
	a := Attr{Ino: n.Ino, Mode: syscall.S_IFDIR | 0o555, Nlink: 2, Mtime: v.start, Fixed: n.Fixed()}
	if n.cs != nil {
		a.Mtime = n.cs.date
	}
	if n.IsDir() {
		return a, nil, nil
	}
	data, err := v.Content(n)
	if err != nil {
		return Attr{}, nil, err
	}
	a.Size, a.Nlink, a.Mode = uint64(len(data)), 1, syscall.S_IFREG|0o444
	if n.kind == kindNameLink {
		a.Mode = syscall.S_IFLNK | 0o777
	}
	if n.kind == kindTreeFile {
		switch n.ent.Flags {
		case "x":
			a.Mode = syscall.S_IFREG | 0o555
		case "l":
			a.Mode = syscall.S_IFLNK | 0o777
		}
	}
	return a, data, nil
}

// Readlink returns a symlink's target: its content in the changeset.
func (v *View) Readlink(n *Node) (string, error) {
	if n.kind == kindNameLink {
		return n.target, nil
	}
	if n.kind != kindTreeFile || n.ent.Flags != "l" {
		return "", syscall.EINVAL
	}
	data, err := v.Content(n)
	return string(data), err
}

// Content returns a file's whole content. The slice is shared with the
// cache: callers must not modify it.
func (v *View) Content(n *Node) ([]byte, error) {
	switch n.kind {
	case kindTreeFile:
		return v.fileText(n.ent)
	case kindRevlogRev:
		key := "r" + n.path + "\x00" + strconv.Itoa(n.rev)
		if b, ok := v.cache.get(key); ok {
			return b.([]byte), nil
		}
		rl, err := v.openRevlog(n.path)
		if err != nil {
			return nil, err
		}
		defer rl.Close()
		if n.rev >= rl.Len() {
			return nil, syscall.ENOENT // stripped since
		}
		b, err := rl.Revision(n.rev)
		if err != nil {
			return nil, err
		}
		v.cache.add(key, b, int64(len(b)))
		return b, nil
	case kindRevlogIndex:
		rl, err := v.openRevlog(n.path)
		if err != nil {
			return nil, err
		}
		defer rl.Close()
		var b bytes.Buffer
		if err := hgfmt.WriteIndex(&b, rl, true, true); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case kindText:
		s, err := v.current()
		if err != nil {
			return nil, err
		}
		defer v.release(s)
		return s.text(n.path)
	case kindNameLink:
		return []byte(n.target), nil
	}
	return nil, syscall.EISDIR
}

// Cached returns a changeset file's content if the view's cache holds it
// (it was reconstructed lately), without reconstructing it otherwise.
func (v *View) Cached(n *Node) ([]byte, bool) {
	if n.kind != kindTreeFile {
		return nil, false
	}
	b, ok := v.cache.get(textKey(n.ent))
	if !ok {
		return nil, false
	}
	return b.([]byte), true
}

func textKey(e revlog.ManifestEntry) string { return "f" + e.Path + "\x00" + string(e.Node[:]) }

// fileText returns a file revision's content as hg cat prints it.
func (v *View) fileText(e revlog.ManifestEntry) ([]byte, error) {
	return v.fileTextWith(e, nil)
}

// FileRevision returns revision node of the file path as hg cat prints
// it, from the same cache as the changeset trees' files: the contents of
// a virtual file in a mount's working copy (fsnode's virtual.go).
func (v *View) FileRevision(path string, node revlog.Node) ([]byte, error) {
	return v.fileText(revlog.ManifestEntry{Path: path, Node: node})
}

// preread is a filelog index a caller read already: its store path and
// contents (nil: not read after all).
type preread struct {
	name  string
	index []byte
}

// fileTextWith is fileText given the file's filelog index when the
// caller has read it already (nil: not read).
func (v *View) fileTextWith(e revlog.ManifestEntry, pre *preread) ([]byte, error) {
	key := textKey(e)
	if b, ok := v.cache.get(key); ok {
		return b.([]byte), nil
	}
	// One reconstruction per file at a time: a listing and the
	// prefetcher often ask for the same file together, and the second
	// waits for the first's result rather than redoing it.
	v.flightMu.Lock()
	if c, ok := v.flight[key]; ok {
		v.flightMu.Unlock()
		<-c.done
		return c.body, c.err
	}
	c := &flight{done: make(chan struct{})}
	if v.flight == nil {
		v.flight = map[string]*flight{}
	}
	v.flight[key] = c
	v.flightMu.Unlock()
	c.body, c.err = v.reconstruct(e, key, pre)
	v.flightMu.Lock()
	delete(v.flight, key)
	v.flightMu.Unlock()
	close(c.done)
	return c.body, c.err
}

// flight is a reconstruction in progress (fileText).
type flight struct {
	done chan struct{}
	body []byte
	err  error
}

// reconstruct reads a file revision from its filelog into the cache.
// pre is the filelog index if the caller read it (nil: not read); a
// reconstruction from it that fails is redone from the files, whose
// result and error are the ones returned.
func (v *View) reconstruct(e revlog.ManifestEntry, key string, pre *preread) ([]byte, error) {
	if b, ok := v.cache.get(key); ok { // finished while we waited for the lock
		return b.([]byte), nil
	}
	if pre != nil && pre.index != nil {
		dname := "" // an inline revlog has no data file to name
		if !revlog.IndexInline(pre.index) {
			dname = v.layout.Encode("data/" + e.Path + ".d")
		}
		if fl, err := revlog.OpenWithIndex(v.st, pre.name, dname, pre.index); err == nil {
			body, err := repo.FileContent(fl, e)
			fl.Close()
			if err == nil {
				v.cache.add(key, body, int64(len(body)))
				return body, nil
			}
		}
	}
	iname, dname := v.layout.Encode("data/"+e.Path+".i"), v.layout.Encode("data/"+e.Path+".d")
	fl, err := v.openRevlogData(iname, dname)
	if errors.Is(err, syscall.ENOENT) {
		return nil, fmt.Errorf("%s: no filelog: %w", e.Path, revlog.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	defer fl.Close()
	body, err := repo.FileContent(fl, e)
	if err != nil {
		return nil, err
	}
	v.cache.add(key, body, int64(len(body)))
	return body, nil
}

// Remember records that an adapter handed n's inode number to a kernel
// (one more lookup), so that Node can find it again; Forget undoes n
// lookups. A hash collision between two live nodes is reported as an
// error rather than served.
func (v *View) Remember(n *Node) error {
	if n.Ino == v.root.Ino {
		return nil
	}
	v.tableMu.Lock()
	defer v.tableMu.Unlock()
	if e, ok := v.table[n.Ino]; ok {
		if !sameNode(e.n, n) {
			return fmt.Errorf("hgview: inode %#x names two nodes (%q, %q)", n.Ino, e.n.path, n.path)
		}
		e.n = n // the newest binding (a moved symbolic REV gets a new number)
		e.refs++
		return nil
	}
	v.table[n.Ino] = &tableEntry{n: n, refs: 1}
	return nil
}

func sameNode(a, b *Node) bool {
	if a.kind != b.kind || a.path != b.path || a.rev != b.rev || a.ns != b.ns || a.target != b.target {
		return false
	}
	if a.cs != nil && b.cs != nil {
		return a.cs.sym == b.cs.sym && a.cs.node == b.cs.node
	}
	return a.cs == nil && b.cs == nil
}

// Forget drops nlookup lookups of ino.
func (v *View) Forget(ino, nlookup uint64) (gone bool) {
	v.tableMu.Lock()
	defer v.tableMu.Unlock()
	if e, ok := v.table[ino]; ok {
		if e.refs <= nlookup {
			delete(v.table, ino)
			return true
		}
		e.refs -= nlookup
	}
	return false
}

// Node returns the node an inode number was remembered for; the root and
// fixed nodes are always known.
func (v *View) Node(ino uint64) (*Node, bool) {
	if ino == v.root.Ino {
		return v.root, true
	}
	v.tableMu.Lock()
	e, ok := v.table[ino]
	v.tableMu.Unlock()
	if ok {
		return e.n, true
	}
	switch ino - v.opt.RootIno {
	case offRev:
		return v.fixed(offRev, kindRevDir, ""), true
	case offRevlogs:
		return v.fixed(offRevlogs, kindRevlogsDir, ""), true
	}
	for _, t := range textFiles {
		if ino == v.opt.RootIno+t.off {
			return v.fixed(t.off, kindText, t.name), true
		}
	}
	for _, d := range nameDirs {
		if ino == v.opt.RootIno+d.off {
			return v.nameRoot(d.off, d.name), true
		}
	}
	return nil, false
}

// Owns reports whether ino is a number this view hands out.
func (v *View) Owns(ino uint64) bool {
	return ino >= hashedBase || (ino >= v.opt.RootIno && ino <= v.opt.RootIno+offBranchDir && ino != v.opt.RootIno+1)
}
