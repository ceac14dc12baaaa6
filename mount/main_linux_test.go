//go:build linux

package mount

import (
	"os"
	"testing"

	"github.com/hgfs/hgfs/internal/mmapload"
	"github.com/hgfs/hgfs/testenv"
)

// mmapChildEnv makes the test binary a memory-mapping child
// (mmapload.Main with the command line's arguments) instead of running
// tests: a process must not map files of a mount it serves itself (see
// package mmapload).
const mmapChildEnv = "HGFS_TEST_MMAPLOAD"

// TestMain removes the repositories testenv generated for this package.
func TestMain(m *testing.M) {
	if os.Getenv(mmapChildEnv) != "" {
		os.Exit(mmapload.Main(os.Args[1:]))
	}
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}
