//go:build unix

package main

import "syscall"

type rusage struct{ user, sys, childUser, childSys float64 }

func readRusage() rusage {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return rusage{sec(self.Utime), sec(self.Stime), sec(kids.Utime), sec(kids.Stime)}
}
