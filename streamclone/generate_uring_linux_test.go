package streamclone

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// uringFiles writes n files over n/3+1 subdirectories of dir (more
// directories per batch than a dirCache keeps), sizes 0 up to ~3 KiB,
// and returns their entries and contents.
func uringFiles(t *testing.T, dir string, n int) ([]genEntry, [][]byte) {
	t.Helper()
	var entries []genEntry
	var contents [][]byte
	for i := range n {
		rel := filepath.Join("data", fmt.Sprintf("d%03d", i/3), fmt.Sprintf("f%d.i", i))
		data := bytes.Repeat([]byte{byte('a' + i%26)}, (i*37)%3000)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, genEntry{src: srcStore, name: filepath.ToSlash(rel), dir: dir, rel: rel, size: int64(len(data))})
		contents = append(contents, data)
	}
	return entries, contents
}

// TestURingReadBatch reads batches through the ring: contents in order,
// and the first entry it could not read as recorded (missing, shrunk)
// reported for the system call path to redo.
func TestURingReadBatch(t *testing.T) {
	r := newURing()
	if r == nil {
		t.Skip("io_uring is not available here (kernel or sandbox): batches are read with system calls")
	}
	defer r.close()
	dir := t.TempDir()
	entries, contents := uringFiles(t, dir, 2*batchFiles)
	dirs := openDirs(entries)
	defer dirs.close()
	c := dirs.cache()
	defer c.close()

	check := func(what string, es []genEntry, cs [][]byte, wantNext int) {
		t.Helper()
		ptrs := make([]*genEntry, len(es))
		total := 0
		for i := range es {
			ptrs[i] = &es[i]
			total += int(es[i].size)
		}
		p := make([]byte, total)
		next, ok := r.readBatch(c, ptrs, p)
		if !ok || next != wantNext {
			t.Fatalf("%s: readBatch = %d, %v; want %d, true", what, next, ok, wantNext)
		}
		var want []byte
		for _, d := range cs[:next] {
			want = append(want, d...)
		}
		if !bytes.Equal(p[:len(want)], want) {
			t.Errorf("%s: contents differ", what)
		}
	}
	for i := 0; i < len(entries); i += batchFiles {
		check(fmt.Sprintf("batch at %d", i), entries[i:i+batchFiles], contents[i:i+batchFiles], batchFiles)
	}

	// A file grown since the snapshot is read up to its recorded size.
	grown := append([]genEntry(nil), entries[:batchFiles]...)
	grownData := append([][]byte(nil), contents[:batchFiles]...)
	grown[5].size -= 3
	grownData[5] = grownData[5][:len(grownData[5])-3]
	check("grown", grown, grownData, batchFiles)

	// Missing and shrunk files stop the batch where they are.
	missing := append([]genEntry(nil), entries[:batchFiles]...)
	missing[7].rel += ".gone"
	check("missing", missing, contents, 7)
	shrunk := append([]genEntry(nil), entries[:batchFiles]...)
	shrunk[9].size++
	check("shrunk", shrunk, contents, 9)
}

// TestEntryReaderURing streams many small files through the read-ahead
// (ring) path and checks what comes out, then that a file that shrank
// is hg's error and not a short stream.
func TestEntryReaderURing(t *testing.T) {
	dir := t.TempDir()
	entries, contents := uringFiles(t, dir, 5*batchFiles+7)
	var want bytes.Buffer
	for _, d := range contents {
		want.Write(d)
	}
	copyAll := func(es []genEntry) (string, error) {
		r := newEntryReader(context.Background(), es, prefetchReaders)
		defer r.close()
		var out bytes.Buffer
		for i := range es {
			if err := r.copy(&es[i], &out); err != nil {
				return out.String(), err
			}
		}
		return out.String(), nil
	}
	got, err := copyAll(entries)
	if err != nil || got != want.String() {
		t.Fatalf("copied %d bytes, %v; want %d bytes", len(got), err, want.Len())
	}
	bad := append([]genEntry(nil), entries...)
	bad[100].size += 10
	_, err = copyAll(bad)
	if err == nil || !strings.Contains(err.Error(), "clone could only read") || !strings.Contains(err.Error(), bad[100].name) {
		t.Errorf("shrunk file: %v", err)
	}
}
