//go:build !unix

package store

// walker returns the storeFS for s: elsewhere the walk goes through the
// fs.FS (see walk_unix.go for the unix fast path), which reads nothing
// during the walk whatever the budget.
func (s *Store) walker(int64) storeFS { return fsWalker{s.fsys} }
