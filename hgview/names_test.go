package hgview

import (
	"testing"

	"github.com/hgfs/hgfs/revlog"
)

func TestNamePaths(t *testing.T) {
	for name, want := range map[string]bool{
		"tip": true, "feature/x": true, "a/b/c": true, "v1.0": true, "with space": true,
		"": false, "/x": false, "x/": false, "a//b": false, ".": false, "..": false, "a/../b": false, "a/./b": false, "nul\x00": false,
	} {
		if got := pathName(name); got != want {
			t.Errorf("pathName(%q) = %v", name, got)
		}
	}
	var n revlog.Node
	n[0] = 0xab
	for name, want := range map[string]string{
		"tip":       "../rev/ab00000000000000000000000000000000000000",
		"feature/x": "../../rev/ab00000000000000000000000000000000000000",
	} {
		if got := nameTarget(name, n); got != want {
			t.Errorf("nameTarget(%q) = %q, want %q", name, got, want)
		}
	}
}
