//go:build !unix

package worktree

// getUmask: no umask outside Unix; hg's default there.
func getUmask() uint32 { return 0o022 }
