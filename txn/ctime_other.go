//go:build !linux

package txn

import "io/fs"

// ctime is not read here (Stat_t differs per system; on Windows hg
// compares the creation time, which a rename keeps): no ambiguity fix.
func ctime(fs.FileInfo) (int64, bool) { return 0, false }
