//go:build !linux

package main

import "errors"

// xattrVirtual: no cache mount here takes user.hgfs.virtual.
const xattrVirtual = false

func setXattr(string, string, []byte) error { return errors.ErrUnsupported }

func getXattr(string, string, []byte) (int, error) { return 0, errors.ErrUnsupported }

var errNoXattr = errors.ErrUnsupported
