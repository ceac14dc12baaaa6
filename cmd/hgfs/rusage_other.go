//go:build !unix

package main

type rusage struct{ user, sys, childUser, childSys float64 }

// readRusage has no portable source of CPU times without unix's getrusage;
// --time then reports wall time with zero CPU figures.
func readRusage() rusage { return rusage{} }
