//go:build linux

package mount

import (
	"os"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestMain removes the repositories testenv generated for this package.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}
