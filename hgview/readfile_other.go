//go:build !unix

package hgview

import "os"

// readFile reads a file whole (see readfile_unix.go).
func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
