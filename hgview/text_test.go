package hgview

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

func TestTextFilesMatchHg(t *testing.T) {
	dir := testRepo(t)
	v := openView(t, dir)
	for _, name := range []string{"log", "heads", "tags", "bookmarks", "branches"} {
		n := mustWalk(t, v, name)
		got, err := v.Content(n)
		if err != nil {
			t.Fatal(err)
		}
		want := testenv.Hg(t, dir, name)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n%s", name, testenv.Diff("hg "+name, string(want), "view", string(got)))
		}
		a, err := v.GetAttr(n)
		if err != nil || a.Size != uint64(len(want)) || a.Fixed {
			t.Errorf("%s: attr %+v, %v", name, a, err)
		}
	}
}

func TestTextEdgeCases(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	testenv.Hg(t, "", "init", dir)
	compare := func(stage string) {
		v := openView(t, dir)
		for _, name := range []string{"log", "heads", "tags", "bookmarks", "branches"} {
			want, _, _ := testenv.HgResult(t, dir, name) // hg heads exits 1 with no heads
			got, err := v.Content(mustWalk(t, v, name))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %s: %v\n%s", stage, name, err, testenv.Diff("hg "+name, string(want), "view", string(got)))
			}
		}
	}
	compare("empty")
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hg := func(args ...string) { testenv.Hg(t, dir, args...) }
	write("f", "1\n")
	hg("commit", "-q", "-A", "-d", "0 0", "-m", "zero")
	hg("branch", "-q", "closed-one")
	write("f", "2\n")
	hg("commit", "-q", "-d", "1 0", "-m", "to close")
	hg("commit", "-q", "--close-branch", "-d", "2 0", "-m", "closing")
	hg("update", "-q", "0")
	hg("branch", "-q", "inactive")
	write("g", "x\n")
	hg("commit", "-q", "-A", "-d", "3 0", "-m", "inactive branch")
	hg("update", "-q", "0")
	write("h", "y\n")
	hg("commit", "-q", "-A", "-d", "4 -7200", "-m", "default work\n\nmore")
	hg("merge", "-q", "3")
	hg("commit", "-q", "-d", "5 0", "-m", "merge inactive")
	hg("tag", "-d", "6 0", "-r", "0", "tëst-tag")
	hg("bookmark", "-q", "active-bm")
	hg("bookmark", "-q", "-r", "1", "other")
	compare("history")
}

func TestHiddenChangesets(t *testing.T) {
	dir := testenv.Generate(t, testenv.Obsolete)
	v := openView(t, dir)
	for _, name := range []string{"log", "heads", "tags", "bookmarks", "branches"} {
		want, _, _ := testenv.HgResult(t, dir, name)
		got, err := v.Content(mustWalk(t, v, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v\n%s", name, err, testenv.Diff("hg "+name, string(want), "view", string(got)))
		}
	}
	hidden := strings.Fields(string(testenv.Hg(t, dir, "log", "--hidden", "-r", "hidden()", "-T", "{rev} {node}\n")))
	if len(hidden) == 0 {
		t.Fatal("the Obsolete repository has no hidden changesets")
	}
	ents, err := v.ReadDir(mustWalk(t, v, "rev"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, e := range ents {
		listed[e.Name] = true
	}
	for i := 0; i < len(hidden); i += 2 {
		if listed[hidden[i]] {
			t.Errorf("rev/ lists hidden changeset %s", hidden[i])
		}
		for _, sym := range []string{hidden[i], hidden[i+1]} {
			if _, err := walk(t, v, "rev/"+sym); !errors.Is(err, syscall.ENOENT) {
				t.Errorf("rev/%s (hidden): %v, want ENOENT", sym, err)
			}
		}
	}
	visible := strings.Fields(string(testenv.Hg(t, dir, "log", "-T", "{rev} ")))
	if len(listed) != len(visible) {
		t.Errorf("rev/ lists %d changesets, hg log %d", len(listed), len(visible))
	}
}
