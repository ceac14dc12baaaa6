//go:build !unix

package sysio

// BreakLink does nothing where hard links are not counted by os.Lstat
// (Windows: hgfs's writers there work on copies hg made, and a local hg
// clone copies rather than links on NTFS unless told).
func BreakLink(path string) error { return nil }
