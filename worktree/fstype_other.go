//go:build !linux

package worktree

// tickingFS reports whether the filesystem holding dir is one whose
// clock hg 7 waits for before filtering mtimes: here hgfs does not tell
// filesystems apart, and keeps to the whole-second filter.
func tickingFS(dir string) bool { return false }
