package sysio

import "golang.org/x/sys/unix"

// OpenBeneath opens rel for reading relative to the directory dirfd with
// openat2(2), resolving it beneath dirfd (RESOLVE_BENEATH, no magic
// links): neither ".." nor a symlink leads it out of the directory.
func OpenBeneath(dirfd int, rel string) (int, error) {
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	return Retry(func() (int, error) { return unix.Openat2(dirfd, rel, &how) })
}
