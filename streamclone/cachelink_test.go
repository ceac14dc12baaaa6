//go:build unix

package streamclone

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

// TestCacheSymlinkNotStreamed: a symbolic link in .hg/cache is not
// streamed, neither the link's text nor its target's bytes; a target
// shorter than the link's text does not abort the stream either. (The
// walk used to size such an entry with lstat and read it through the
// link: a stream carried the first bytes of the target.)
func TestCacheSymlinkNotStreamed(t *testing.T) {
	root := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	cache := filepath.Join(root, ".hg", "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	secret := []byte("root:x:0:0:SECRET-OUTSIDE-THE-REPOSITORY:/root:/bin/bash\n" + string(bytes.Repeat([]byte("s"), 4096)))
	long := filepath.Join(outside, "passwd")
	short := filepath.Join(outside, "s")
	if err := os.WriteFile(long, secret, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"branch2-served": long, "tags2-served": short, "rbc-names-v1": "/etc/passwd"}
	for name, target := range links {
		os.Remove(filepath.Join(cache, name))
		if err := os.Symlink(target, filepath.Join(cache, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A regular cache file still goes.
	if err := os.WriteFile(filepath.Join(cache, "hgtagsfnodes1"), []byte("REGULAR-CACHE"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := st.CacheFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := links[f.Name]; ok {
			t.Errorf("cache file %s listed", f.Name)
		}
	}
	var out bytes.Buffer
	if err := GenerateV2(context.Background(), st, &out); err != nil {
		t.Fatalf("stream with symbolic links in the cache: %v", err)
	}
	for _, leak := range [][]byte{[]byte("SECRET-OUTSIDE"), []byte("root:x:0"), []byte(outside)} {
		if bytes.Contains(out.Bytes(), leak) {
			t.Errorf("stream carries %q", leak)
		}
	}
	if !bytes.Contains(out.Bytes(), []byte("REGULAR-CACHE")) {
		t.Error("regular cache file not streamed")
	}
	// Reading never follows a link, whatever listed it.
	if _, err := readRegular(filepath.Join(cache, "branch2-served"), int64(len(secret))); err == nil {
		t.Error("readRegular followed a symbolic link")
	}
	if _, err := readRegular(cache, 0); err == nil {
		t.Error("readRegular read a directory")
	}
}
