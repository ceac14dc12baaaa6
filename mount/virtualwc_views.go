//go:build linux || windows

package mount

import (
	"io/fs"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/hgview"
)

// cacheView opens hgview's view of the repository whose .hg is at the
// root of a cache; its root is the control directory, virtualDirIno.
func cacheView(fsys *fsnode.FS) func() (*hgview.View, error) {
	return func() (*hgview.View, error) {
		hg, err := fs.Sub(fsys.FS(), ".hg")
		if err != nil {
			return nil, err
		}
		return hgview.Open(hg, hgview.Options{RootIno: virtualDirIno})
	}
}

// resolveVirtual has the cache's virtual files (a virtual working copy,
// fsnode's virtual.go) read through w: their contents are file
// revisions of the repository in the cache, read through the same
// caches as .hgfs/rev/REV/.
func resolveVirtual(fsys *fsnode.FS, w *views) {
	fsys.SetResolver(func(ref fsnode.VirtualRef) ([]byte, error) {
		v, err := w.view()
		if err != nil {
			return nil, err
		}
		return v.FileRevision(ref.Path, ref.Node)
	})
}
