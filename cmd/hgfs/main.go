// Command hgfs is a Mercurial-compatible toolkit: it mounts repository
// stores from a bbolt-indexed cache, stream-clones into that cache or a
// directory, serves stream clones, and inspects revlogs.
//
// The command line follows hg's conventions: global options may appear
// anywhere, `-R/--repository` names the repository (otherwise it is found
// from the working directory upward), errors are "abort: ..." on stderr with
// exit status 255, and "nothing to do" exits 1.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
