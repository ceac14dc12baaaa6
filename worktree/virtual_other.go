//go:build !unix

package worktree

import "io/fs"

// links is fi's link count: 1, where the platform does not say.
func links(fs.FileInfo) uint64 { return 1 }
