package main

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestAbsFrom: command-line paths resolve as the platform resolves them;
// on Windows "/x" and "\x" are on the working directory's drive.
func TestAbsFrom(t *testing.T) {
	cases := [][3]string{ // cwd, path, want
		{"/w/d", "x/y", "/w/d/x/y"},
		{"/w/d", "/x/y", "/x/y"},
		{"/w/d", "../x", "/w/x"},
	}
	if runtime.GOOS == "windows" {
		cases = [][3]string{
			{`Z:\w\d`, `x\y`, `Z:\w\d\x\y`},
			{`Z:\w\d`, `/x/y`, `Z:\x\y`},
			{`Z:\w\d`, `\x\y`, `Z:\x\y`},
			{`Z:\w\d`, `C:\x`, `C:\x`},
			{`Z:\w\d`, `\\srv\share\x`, `\\srv\share\x`},
			{`\\srv\share\d`, `/x`, `\\srv\share\x`},
		}
	}
	for _, c := range cases {
		if got := absFrom(filepath.FromSlash(c[0]), c[1]); got != filepath.FromSlash(c[2]) {
			t.Errorf("absFrom(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
