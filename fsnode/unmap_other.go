//go:build !linux

package fsnode

import bolt "go.etcd.io/bbolt"

// unmapIndexPages is Linux's alone (sys_linux.go): elsewhere
// Options.UnmapIndex does nothing.
func unmapIndexPages(*bolt.DB, *bolt.Tx) error { return nil }
