//go:build !windows

package fsnode

import "os"

// syncDir fsyncs the directory dir, making the names created in it
// durable (Windows has no such call; see sys_windows.go).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
