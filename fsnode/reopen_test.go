package fsnode

import (
	"bytes"
	"testing"
)

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := must[Attr](t)(f.Mkdir(bg, f.Root(), "d", 0o755))
	small := createFile(t, f, d.Ino, "small", []byte("hello"))
	bigData := bytes.Repeat([]byte("0123456789"), 1000)
	big := createFile(t, f, d.Ino, "big", bigData)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkFsck(t, dir)
	f, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := readAll(t, f, small.Ino); string(got) != "hello" {
		t.Errorf("small = %q", got)
	}
	if got := readAll(t, f, big.Ino); !bytes.Equal(got, bigData) {
		t.Errorf("big differs: %d bytes", len(got))
	}
	a := must[Attr](t)(f.Lookup(bg, d.Ino, "big"))
	if a.Ino != big.Ino || a.Size != uint64(len(bigData)) {
		t.Errorf("lookup big = %+v", a)
	}
}
