//go:build !windows

package testenv

func underWine() bool { return false }
