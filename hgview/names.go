package hgview

import (
	"sort"
	"strings"
	"syscall"

	"github.com/hgfs/hgfs/revlog"
)

// The name directories: .hgfs/tag/, .hgfs/bookmark/ and .hgfs/branch/
// list the repository's tags, bookmarks and named branches (closed ones
// too), each a symbolic link to the revision it names as rev/FULLNODE
// (a branch names its tip, as rev/BRANCH does). A name with slashes is a
// path: bookmark "feature/x" is bookmark/feature/x, a link in the
// directory bookmark/feature. Names that cannot be paths (an empty
// component, ".", "..") are left out, as are names of hidden or unknown
// changesets; when a name is also the directory of longer ones ("a" and
// "a/b"), the link wins. Like the text files, the directories follow the
// repository: their entries and links move with it, so neither is Fixed.

// Namespaces, as the directories are named.
const (
	nsTag      = "tag"
	nsBookmark = "bookmark"
	nsBranch   = "branch"
)

// nameDirs are the root's name directories, in listing order.
var nameDirs = []struct {
	name string
	off  uint64
}{{nsBookmark, offBookmarkDir}, {nsBranch, offBranchDir}, {nsTag, offTagDir}}

// names returns the namespace's names and the nodes they name, visible
// and representable ones only.
func (s *snapshot) names(ns string) (map[string]revlog.Node, error) {
	out := map[string]revlog.Node{}
	switch ns {
	case nsTag, nsBookmark:
		get := s.r.Tags
		if ns == nsBookmark {
			get = s.r.Bookmarks
		}
		all, err := get()
		if err != nil {
			return nil, err
		}
		for name, node := range all {
			out[name] = node
		}
	case nsBranch:
		branches, err := s.r.Branches()
		if err != nil {
			return nil, err
		}
		for _, b := range branches {
			out[b.Name] = s.r.Node(b.Tip)
		}
	}
	for name, node := range out {
		if !pathName(name) {
			delete(out, name)
			continue
		}
		if _, err := s.lookup(node.String()); err != nil {
			delete(out, name)
		}
	}
	return out, nil
}

// pathName reports whether name can be a path below a name directory.
func pathName(name string) bool {
	if name == "" || strings.ContainsRune(name, 0) {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// nameTarget is the link's target: rev/FULLNODE, relative to the
// directory the link is in.
func nameTarget(name string, node revlog.Node) string {
	return strings.Repeat("../", strings.Count(name, "/")+1) + "rev/" + node.String()
}

func (v *View) nameNames(ns string) (map[string]revlog.Node, error) {
	s, err := v.current()
	if err != nil {
		return nil, err
	}
	defer v.release(s)
	return s.names(ns)
}

func nameLink(ns, name string, node revlog.Node) *Node {
	t := nameTarget(name, node)
	return &Node{Ino: hashIno("nl", ns, name, t), kind: kindNameLink, ns: ns, path: name, target: t}
}

func nameDir(ns, path string) *Node {
	return &Node{Ino: hashIno("nd", ns, path), kind: kindNamesDir, ns: ns, path: path}
}

func (v *View) lookupName(dir *Node, name string) (*Node, error) {
	all, err := v.nameNames(dir.ns)
	if err != nil {
		return nil, err
	}
	p := childPath(dir, name)
	if node, ok := all[p]; ok {
		return nameLink(dir.ns, p, node), nil
	}
	for n := range all {
		if strings.HasPrefix(n, p+"/") {
			return nameDir(dir.ns, p), nil
		}
	}
	return nil, syscall.ENOENT
}

func (v *View) readNames(dir *Node) ([]DirEntry, error) {
	all, err := v.nameNames(dir.ns)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if dir.path != "" {
		prefix = dir.path + "/"
	}
	seen := map[string]bool{}
	var out []DirEntry
	for n, node := range all {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		first, _, nested := strings.Cut(rest, "/")
		if seen[first] {
			continue
		}
		if _, isName := all[prefix+first]; nested && !isName {
			seen[first] = true
			d := nameDir(dir.ns, prefix+first)
			out = append(out, DirEntry{Name: first, Ino: d.Ino, Mode: syscall.S_IFDIR})
		} else if !nested {
			seen[first] = true
			l := nameLink(dir.ns, n, node)
			out = append(out, DirEntry{Name: first, Ino: l.Ino, Mode: syscall.S_IFLNK})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
