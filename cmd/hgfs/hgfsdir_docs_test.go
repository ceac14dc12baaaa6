package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/hgview"
	"github.com/hgfs/hgfs/testenv"
)

// TestHgfsDirDocumented: every entry of .hgfs (hgview's root, and the
// mount's stats) is described in "hgfs help mount" and in the README's
// section on .hgfs, so neither falls behind the views.
func TestHgfsDirDocumented(t *testing.T) {
	t.Setenv("HGRCPATH", "")
	dir := t.TempDir()
	testenv.Hg(t, dir, "init", "r")
	v, err := hgview.OpenDir(filepath.Join(dir, "r"), hgview.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ents, err := v.ReadDir(v.Root())
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"stats"}
	for _, e := range ents {
		names = append(names, e.Name)
	}
	help, _, _ := dispatchRun(t, "help", "mount")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### The `.hgfs/` directory")
	section, _, _ = strings.Cut(section, "\n### ")
	if !ok {
		t.Fatal("README has no section on .hgfs")
	}
	for _, n := range names {
		for doc, text := range map[string]string{"hgfs help mount": help, "README": section} {
			if !strings.Contains(text, " "+n+"/") && !strings.Contains(text, " "+n+" ") && !strings.Contains(text, "`"+n+"`") && !strings.Contains(text, "`"+n+"/") && !strings.Contains(text, " "+n+",") && !strings.Contains(text, " "+n+"\n") {
				t.Errorf("%s does not describe .hgfs/%s", doc, n)
			}
		}
	}
}
