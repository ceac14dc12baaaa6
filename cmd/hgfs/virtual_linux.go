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
