// Package hgfmt prints what hg prints: the changeset block of `hg log`
// (mercurial/templates/map-cmdline.default, plain, -v and --debug) and
// the `hg debugindex` table (mercurial/revlogutils/debug.py), byte for
// byte. The command line (cmd/hgfs) and the .hgfs/ views (hgview) both
// format through it, so the two cannot drift apart.
//
// It is a package of its own rather than part of repo because it is
// presentation: repo answers questions about a repository, hgfmt turns
// the answers into hg's text. It depends on repo and revlog; nothing
// here keeps state.
//
// # Errors
//
// Formatting a changeset reads it (and, with Debug, its manifests and
// its parents'); damaged revlogs surface as the revlog package's errors.
// The index table cannot fail.
package hgfmt
