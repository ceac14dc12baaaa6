package hgview

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestHashedSplitRevlog reads, through revlogs/STOREPATH and rev/tip, a
// filelog whose path is too long for fncache's encoding (stored as
// dh/...DIGEST.i, the .d with another digest) and which is split (more
// than 128 KiB of incompressible content, so hg moves its data to the
// .d): both must find the data file, and agree with hg debugdata, hg
// debugindex and hg cat.
func TestHashedSplitRevlog(t *testing.T) {
	testenv.HgPath(t)
	dir := filepath.Join(t.TempDir(), "repo")
	testenv.Hg(t, "", "init", dir)
	long := strings.Repeat("a-rather-long-directory-name/", 5) + "and-a-file-name-long-enough-to-hash.bin"
	if len(long) <= 120 {
		t.Fatalf("path of %d bytes is not long enough to hash", len(long))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	content := make([]byte, 200<<10)
	for i := range content {
		content[i] = byte(rng.Uint32())
	}
	p := filepath.Join(dir, filepath.FromSlash(long))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, c := range [][]byte{content, append(content[:len(content):len(content)], "more\n"...)} {
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Hg(t, dir, "commit", "-A", "-q", "-d", "1700000000 0", "-m", "rev "+string(rune('0'+i)))
	}

	// Find its revlog as hg stored it.
	var index, data string
	store := filepath.Join(dir, ".hg", "store")
	err := filepath.WalkDir(filepath.Join(store, "dh"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(store, path)
		switch filepath.Ext(path) {
		case ".i":
			index = filepath.ToSlash(rel)
		case ".d":
			data = filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("no hashed revlog in the store: %v", err)
	}
	if index == "" || data == "" || strings.TrimSuffix(index, ".i")+".d" == data {
		t.Fatalf("want a split hashed revlog with differently hashed .d, have %q and %q", index, data)
	}

	v := openView(t, dir)
	want := testenv.Hg(t, dir, "debugindex", "--debug", long)
	got, err := v.Content(mustWalk(t, v, "revlogs/"+index+"/index"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("revlogs/%s/index (%v):\n%s", index, err, testenv.Diff("hg debugindex --debug", string(want), "view", string(got)))
	}
	for _, rev := range []string{"0", "1"} {
		got, err := v.Content(mustWalk(t, v, "revlogs/"+index+"/"+rev))
		if err != nil {
			t.Fatalf("revlogs/%s/%s: %v", index, rev, err)
		}
		if want := testenv.Hg(t, dir, "debugdata", long, rev); !bytes.Equal(got, want) {
			t.Errorf("revlogs/%s/%s: %d bytes differ from hg debugdata's %d", index, rev, len(got), len(want))
		}
	}
	got, err = v.Content(mustWalk(t, v, "rev/tip/"+long))
	if err != nil {
		t.Fatalf("rev/tip/%s: %v", long, err)
	}
	if want := testenv.Hg(t, dir, "cat", "-r", "tip", long); !bytes.Equal(got, want) {
		t.Errorf("rev/tip/%s: %d bytes differ from hg cat's %d", long, len(got), len(want))
	}
}
