package testenv

import "syscall"

// underWine reports whether this Windows process runs under Wine: Wine's
// ntdll.dll exports wine_get_version, Windows' does not.
func underWine() bool {
	return syscall.NewLazyDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
