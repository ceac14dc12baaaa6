package fsnode

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// TestUnmapIndex: with Options.UnmapIndex, a commit takes the index's
// pages out of the process's mapping (the committer does so at most once
// a second); without it they stay resident. Either way every file reads
// back what was written, its index pages mapped again as it is read.
func TestUnmapIndex(t *testing.T) {
	for _, unmap := range []bool{false, true} {
		t.Run(fmt.Sprint("unmap=", unmap), func(t *testing.T) {
			// Commits only when asked (Sync), so that the one after the pause is
			// the last.
			f := newTestFS(t, Options{UnmapIndex: unmap, CommitInterval: time.Hour})
			defer f.Close()
			files := map[string][]byte{}
			for i := range 2000 {
				name := fmt.Sprintf("f%04d", i)
				files[name] = bytes.Repeat([]byte{byte(i)}, 1000+i%1000) // inline: in the index
				createFile(t, f, RootIno, name, files[name])
			}
			if err := f.Sync(bg); err != nil {
				t.Fatal(err)
			}
			readAll := func(when string) {
				t.Helper()
				for name, want := range files {
					if got := must[[]byte](t)(f.ReadFile(bg, name)); !bytes.Equal(got, want) {
						t.Fatalf("%s: %s: contents differ", when, name)
					}
				}
			}
			// Evicted inodes read back from the index, through its mapping.
			f.tree.Lock()
			f.imu.Lock()
			for ino, in := range f.inodes {
				if ino != RootIno && !in.isDir() {
					delete(f.inodes, ino)
				}
			}
			f.imu.Unlock()
			f.tree.Unlock()
			readAll("before")
			before := testenv.MappedRss(t, "self", filepath.Join(f.Dir(), "index.db"))
			if before < 1<<20 {
				t.Fatalf("%d bytes of the index resident after reading 2 MB of it", before)
			}
			time.Sleep(unmapIndexEvery + 100*time.Millisecond)
			createFile(t, f, RootIno, "last", []byte("last"))
			if err := f.Sync(bg); err != nil {
				t.Fatal(err)
			}
			after := testenv.MappedRss(t, "self", filepath.Join(f.Dir(), "index.db"))
			if unmap && after > before/4 || !unmap && after < before {
				t.Errorf("index resident: %d bytes before the commit, %d after", before, after)
			}
			readAll("after")
		})
	}
}
