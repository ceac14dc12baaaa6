//go:build !linux

// Package posixtest is a POSIX conformance suite for hgfs's file systems.
// It builds on Linux only: its cases check Linux's errnos and rename
// flags (RENAME_NOREPLACE, RENAME_EXCHANGE), and the mounts it tests are
// Linux mounts. Elsewhere the package is empty.
package posixtest
