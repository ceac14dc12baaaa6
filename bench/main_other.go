//go:build !linux

// Command bench times hgfs against its peers on Linux only: it reads
// peak memory from wait4's rusage and GNU time, server CPU from /proc,
// ties its servers' lives to its own with Pdeathsig, and mounts with
// go-fuse. Elsewhere it says so.
package main

import (
	"fmt"
	"os"
	"runtime"
)

func main() {
	fmt.Fprintf(os.Stderr, "bench: runs on Linux only, not on %s\n", runtime.GOOS)
	os.Exit(2)
}
