//go:build !((linux && cgofuse) || windows)

package mount

import (
	"errors"
	"testing"
)

// TestCgofuseNotBuilt checks that a build without the adapter says so,
// and how to get it, instead of failing obscurely.
func TestCgofuseNotBuilt(t *testing.T) {
	if CgofuseAvailable {
		t.Fatal("CgofuseAvailable in a build without the adapter")
	}
	_, err := MountCgofuse(nil, t.TempDir(), Options{})
	if !errors.Is(err, ErrCgofuseNotBuilt) {
		t.Fatalf("MountCgofuse: %v, want ErrCgofuseNotBuilt", err)
	}
}
