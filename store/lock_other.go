//go:build !unix && !windows

package store

// processAlive cannot tell without OS support: a lock is never considered
// stale (it then times out, as an old-style lock does in hg).
func processAlive(pid int) bool { return true }

func pidNamespaceInode() (uint64, bool) { return 0, false }
