//go:build linux

package main

import (
	"strings"
	"testing"
)

// TestAtScaleNames: every row -files selects names a registered case, so
// that renaming a case cannot silently drop it from the run at
// mozilla-central's size; and none is on a store -files does not size.
func TestAtScaleNames(t *testing.T) {
	names := map[string]bool{}
	for _, c := range cases {
		names[c.Name] = true
	}
	for _, name := range atScale {
		if !names[name] {
			t.Errorf("atScale names %q, which no case is called", name)
		}
		for _, other := range []string{"(large revlogs)", "(real history)", "revlog, fresh mount", "close()"} {
			if strings.Contains(name, other) {
				t.Errorf("atScale row %q is not on the large store", name)
			}
		}
	}
	defer func(n int) { largeFiles = n }(largeFiles)
	largeFiles = 250000
	if got := atScaleNames(); !got["hg update of the working copy (250k files) into the mount vs native"] || len(got) != len(atScale) {
		t.Errorf("atScaleNames at 250,000 files: %v", got)
	}
}
