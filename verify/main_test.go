package verify_test

import (
	"os"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveGenerated()
	os.Exit(code)
}
