//go:build !linux

package hugeheap

// Reserve does nothing here: the package is about Linux's transparent
// huge pages.
func Reserve(n int) {}
