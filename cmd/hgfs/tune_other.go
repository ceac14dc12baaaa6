//go:build !linux

package main

// batchScheduling: SCHED_BATCH is Linux's (tune_linux.go), as is the
// go-fuse daemon that asks for it.
func batchScheduling() error { return nil }
