//go:build linux || windows

package mount

// The control directory, MOUNTPOINT/.hgfs, described once for every
// adapter: its name, its entries, their modes, sizes and contents, and
// which changes are refused. The go-fuse raw adapter (virtual_linux.go),
// the node API of repository mounts (views_linux.go) and the cgofuse
// adapter (cgofuse.go) each translate their requests into the few calls
// below and their answers into their own structures; none of them knows
// what the directory holds.
//
// It holds "stats" (the daemon's Info as JSON, generated whenever its
// attributes are asked) and, when the mount has views, hgview's tree of
// the repository at the mount's root (rev/, log, store/, ...). Lookup
// finds .hgfs at the root but no listing of the root shows it; nothing
// can be created, renamed or removed in it or under its name.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/hgview"
)

// Virtual inode numbers live in the top half of the 64-bit space, which
// fsnode never allocates (it counts up from the root). The control
// directory of a cache mount is virtualDirIno, its stats the next number
// (hgview leaves its root's number plus one to stats).
const (
	virtualBase   = 1 << 63
	virtualDirIno = virtualBase + 1
)

// statsName is the control directory's stats file.
const statsName = "stats"

// Modes of the control directory and of its files whose content moves
// (stats, hgview's text files and revlog indexes); the other view nodes
// report their own (hgview.Attr).
const (
	ctlDirMode  = syscall.S_IFDIR | 0o555
	ctlFileMode = syscall.S_IFREG | 0o444
)

// ownerUID and ownerGID own the files the daemon makes up (the control
// directory and its entries, the repository mount's root): the daemon's
// own credentials, which do not change while it runs. Read once: each
// os.Getuid is a system call, and a first walk of a 20,000-file view
// made two per file (3% of the daemon's CPU).
var ownerUID, ownerGID = uint32(os.Getuid()), uint32(os.Getgid())

// control is one mount's control directory.
type control struct {
	info   func() any // the stats file's content, as JSON
	dirIno uint64     // the directory's inode number; stats is dirIno+1
	start  time.Time  // the directory's times
	views  *views     // nil: stats alone
	served servedFiles
}

func newControl(info func() any, dirIno uint64, w *views) *control {
	return &control{info: info, dirIno: dirIno, start: time.Now(), views: w}
}

// ctlNode is a node of the control directory: the directory itself (the
// zero value), its stats file, or a node of the views.
type ctlNode struct {
	stats bool
	n     *hgview.Node
}

// isDir reports whether x is a directory.
func (x ctlNode) isDir() bool { return !x.stats && (x.n == nil || x.n.IsDir()) }

// fixed reports whether x's name binding, attributes and content never
// change (hgview.Node.Fixed); the directory and stats move.
func (x ctlNode) fixed() bool { return x.n != nil && x.n.Fixed() }

// moving reports whether x is a file whose content moves under a fixed
// name: stats, hgview's text files and revlog indexes. Its attributes
// report the content generated for them, which a read without a handle
// then serves (servedFiles).
func (x ctlNode) moving() bool { return !x.isDir() && !x.fixed() && !x.isLink() }

// isLink reports whether x is a view's symbolic link (a name's link moves
// with the repository, but its target is its whole content).
func (x ctlNode) isLink() bool { return x.n != nil && x.n.IsLink() }

// ino is x's inode number.
func (c *control) ino(x ctlNode) uint64 {
	switch {
	case x.stats:
		return c.dirIno + 1
	case x.n != nil:
		return x.n.Ino
	}
	return c.dirIno
}

// errControl is the one answer to a request that would create, change
// or remove anything in the control directory or under its name.
var errControl error = syscall.EPERM

// lookup finds name in the directory dir.
func (c *control) lookup(dir ctlNode, name string) (ctlNode, error) {
	if !dir.isDir() {
		return ctlNode{}, syscall.ENOTDIR
	}
	if dir.n == nil && name == statsName {
		return ctlNode{stats: true}, nil
	}
	if c.views == nil {
		return ctlNode{}, syscall.ENOENT
	}
	v, parent, err := c.views.resolve(dir.n)
	if err != nil {
		return ctlNode{}, err
	}
	n, err := v.Lookup(parent, name)
	if err != nil {
		return ctlNode{}, err
	}
	return ctlNode{n: n}, nil
}

// attr returns x's attributes and, for a fixed view file, its content,
// which a directory listing may hand the kernel ahead of its reads.
// Everything is owned by the daemon's user (ownerUID, ownerGID) and has
// one time for all three. Stats and the other moving files are
// generated anew and report the generation recorded now.
func (c *control) attr(x ctlNode) (fsnode.Attr, []byte, error) {
	a, data, err := c.viewAttr(x)
	if err != nil {
		return fsnode.Attr{}, nil, err
	}
	return fsnode.Attr{
		Ino: fsnode.Ino(a.Ino), Mode: a.Mode, Nlink: a.Nlink,
		Size: a.Size, Blocks: (a.Size + 511) / 512,
		Uid: ownerUID, Gid: ownerGID,
		Atime: a.Mtime, Mtime: a.Mtime, Ctime: a.Mtime,
	}, data, nil
}

// viewAttr is attr in hgview's terms, which every node of the control
// directory can be described in.
func (c *control) viewAttr(x ctlNode) (hgview.Attr, []byte, error) {
	switch {
	case x.fixed() || x.n != nil && (x.n.IsDir() || x.n.IsLink()):
		v, err := c.views.view()
		if err != nil {
			return hgview.Attr{}, nil, err
		}
		return v.GetAttrContent(x.n)
	case x.moving():
		// Not GetAttr, which would generate a view's content a second
		// time: a moving file is a plain read-only file.
		sv := c.served.take(c.ino(x))
		if sv == nil {
			var err error
			if sv, err = c.generate(x); err != nil {
				return hgview.Attr{}, nil, err
			}
		}
		return hgview.Attr{Ino: c.ino(x), Mode: ctlFileMode, Nlink: 1, Size: uint64(len(sv.data)), Mtime: sv.mtime}, nil, nil
	}
	return hgview.Attr{Ino: c.dirIno, Mode: ctlDirMode, Nlink: 2, Mtime: c.start}, nil, nil
}

// generate records the current content of x, a file whose content moves.
func (c *control) generate(x ctlNode) (*served, error) {
	var data []byte
	if x.stats {
		b, err := json.MarshalIndent(c.info(), "", "  ")
		if err != nil {
			return nil, err
		}
		data = append(b, '\n')
	} else {
		v, err := c.views.view()
		if err != nil {
			return nil, err
		}
		if data, err = v.Content(x.n); err != nil {
			return nil, err
		}
	}
	return c.served.update(c.ino(x), data), nil
}

// open returns what a handle opened on x with the open(2) flags reads:
// nothing in the control directory can be written, and a file whose
// content moves reads the generation made now.
func (c *control) open(x ctlNode, flags int) ([]byte, error) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR) != 0 {
		return nil, syscall.EACCES
	}
	if x.isDir() {
		return nil, syscall.EISDIR
	}
	if x.stats {
		sv, err := c.generate(x)
		if err != nil {
			return nil, err
		}
		return sv.data, nil
	}
	return c.read(x)
}

// read returns what a read of x without a handle reads: its content, or
// for a file whose content moves the generation its attributes last
// reported.
func (c *control) read(x ctlNode) ([]byte, error) {
	if x.isDir() {
		return nil, syscall.EISDIR
	}
	if x.fixed() {
		v, err := c.views.view()
		if err != nil {
			return nil, err
		}
		return v.Content(x.n)
	}
	sv, err := c.current(x)
	if err != nil {
		return nil, err
	}
	return sv.data, nil
}

// current returns the generation of x, a file whose content moves, that
// its attributes last reported, or a new one if they never did.
func (c *control) current(x ctlNode) (*served, error) {
	if sv := c.served.get(c.ino(x)); sv != nil {
		return sv, nil
	}
	return c.generate(x)
}

// readlink returns the target of x, a view's symlink.
func (c *control) readlink(x ctlNode) (string, error) {
	if x.n == nil {
		return "", syscall.EINVAL
	}
	v, err := c.views.view()
	if err != nil {
		return "", err
	}
	return v.Readlink(x.n)
}

// ctlEntry is one entry of a control directory listing, with the node a
// lookup of its name finds where the listing made it (nil otherwise).
type ctlEntry struct {
	Name string
	Ino  uint64
	Mode uint32 // file type bits
	Node *ctlNode
}

// entries lists the directory dir; in the control directory itself,
// stats comes first, and alone while no repository is there.
func (c *control) entries(dir ctlNode) ([]ctlEntry, error) {
	if !dir.isDir() {
		return nil, syscall.ENOTDIR
	}
	var out []ctlEntry
	if dir.n == nil {
		stats := ctlNode{stats: true}
		out = append(out, ctlEntry{Name: statsName, Ino: c.ino(stats), Mode: syscall.S_IFREG, Node: &stats})
	}
	if c.views == nil {
		return out, nil
	}
	v, n, err := c.views.resolve(dir.n)
	if err != nil {
		if dir.n == nil {
			return out, nil // no repository yet: stats alone
		}
		return nil, err
	}
	ents, err := v.ReadDir(n)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		ce := ctlEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode}
		if n := e.Node(); n != nil {
			ce.Node = &ctlNode{n: n}
		}
		out = append(out, ce)
	}
	return out, nil
}

// views is hgview's tree of the repository at the mount's root, shown in
// the control directory beside stats. The view is opened on first use,
// so a cache mounted empty shows it once a repository has been cloned or
// initialised into it; until then its names are not found.
type views struct {
	open func() (*hgview.View, error)

	mu sync.Mutex
	v  *hgview.View
}

func (w *views) view() (*hgview.View, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.v != nil {
		return w.v, nil
	}
	v, err := w.open()
	if err != nil {
		// No repository (yet): its names do not exist.
		return nil, fmt.Errorf("%w: .hgfs views: %v", syscall.ENOENT, err)
	}
	w.v = v
	return v, nil
}

// resolve returns the view and n, or the view's root for nil (the
// control directory exists before the view is opened).
func (w *views) resolve(n *hgview.Node) (*hgview.View, *hgview.Node, error) {
	v, err := w.view()
	if err != nil {
		return nil, nil, err
	}
	if n == nil {
		return v, v.Root(), nil
	}
	return v, n, nil
}

// served is one generation of a moving file's content.
type served struct {
	data  []byte
	mtime time.Time
	held  bool // read to its end since its last look (servedFiles.take); under servedFiles.mu
}

// servedFiles holds, per inode, the content last reported for a file
// whose content moves. Attributes report its size and mtime; a read
// serves the same bytes, so the kernel never reads content cut at
// another generation's size. A new generation gets a new mtime, which
// makes the kernel drop the previous one's pages (AUTO_INVAL_DATA).
// Entries go when the kernel forgets the node.
//
// A generation a READ served to its end is held: the next look at the
// attributes reports it again instead of a new one (readRange). Two
// readers of one file at once can still take each other's: without OPEN
// (no_open) nothing tells one reader's requests from another's, the
// caller's pid being a thread's.
type servedFiles struct {
	mu sync.Mutex
	m  map[uint64]*served
}

// take returns ino's current generation if it is held, and lets it go:
// only the one look after a READ reached the end sees it again.
func (s *servedFiles) take(ino uint64) *served {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := s.m[ino]
	if sv == nil || !sv.held {
		return nil
	}
	sv.held = false
	return sv
}

// update records data as ino's content, keeping the previous
// generation (and its mtime) if the bytes are the same.
func (s *servedFiles) update(ino uint64, data []byte) *served {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.m[ino]; old != nil && bytes.Equal(old.data, data) {
		return old
	}
	if s.m == nil {
		s.m = map[uint64]*served{}
	}
	sv := &served{data: data, mtime: time.Now()}
	s.m[ino] = sv
	return sv
}

// get returns the generation last reported for ino, if any.
func (s *servedFiles) get(ino uint64) *served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[ino]
}
