//go:build !unix

package store

// walker returns the storeFS for s: elsewhere the walk goes through the
// fs.FS (see walk_unix.go for the unix fast path).
func (s *Store) walker() storeFS { return fsWalker{s.fsys} }
