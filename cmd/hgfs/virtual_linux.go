package main

import "golang.org/x/sys/unix"

// xattrVirtual: a cache mount here takes user.hgfs.virtual (go-fuse).
const xattrVirtual = true

func setXattr(p, name string, value []byte) error {
	for {
		err := unix.Setxattr(p, name, value, 0)
		if err != unix.EINTR {
			return err
		}
	}
}

// getXattr reads attribute name of p into buf, once: an update request
// is not repeated (the daemon does not stop one midway for a signal).
// errNoXattr is the error of a name no file has.
func getXattr(p, name string, buf []byte) (int, error) { return unix.Getxattr(p, name, buf) }

const errNoXattr = unix.ENODATA
