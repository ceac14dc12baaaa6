//go:build linux

package posixtest

import "testing"

// TestNative runs the suite on the native file system: it checks the
// cases themselves against the kernel's behaviour.
func TestNative(t *testing.T) {
	Run(t, func(t *testing.T) FS { return OS(t.TempDir()) })
}
