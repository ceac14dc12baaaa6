package profiling

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// TestCPUSilenceStderr takes a CPU profile at a rate other than 100 Hz
// with fd 2 silenced (what hgfs asks by default) and without it
// (HGFS_TUNE=-silencestderr): both give a profile that parses, and
// stderr is the same file afterwards.
func TestCPUSilenceStderr(t *testing.T) {
	before, err := os.Stderr.Stat()
	if err != nil {
		t.Fatal(err)
	}
	for _, silence := range []bool{true, false} {
		s, err := Start(Options{Kind: "cpu", Format: "pprof", Freq: 250, SilenceStderr: silence})
		if err != nil {
			t.Fatalf("SilenceStderr=%v: %v", silence, err)
		}
		sum := 0
		for i := range 1_000_000 {
			sum += i % 7
		}
		var out bytes.Buffer
		if err := s.Stop(&out); err != nil {
			t.Fatalf("SilenceStderr=%v: stop: %v", silence, err)
		}
		if _, err := profile.Parse(&out); err != nil {
			t.Errorf("SilenceStderr=%v: the profile does not parse: %v (%d)", silence, err, sum)
		}
		after, err := os.Stderr.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) {
			t.Errorf("SilenceStderr=%v: fd 2 is another file after the profile started", silence)
		}
	}
}
