//go:build unix && !linux

package worktree

import "golang.org/x/sys/unix"

// dirOpenMode is how dirFiles opens a directory it only resolves names
// in (dirfd_linux.go uses O_PATH).
const dirOpenMode = unix.O_RDONLY
