package streamclone

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
)

func packed1(files, nbytes uint64, reqs string, entries []tEntry) []byte {
	b := []byte("HGS1UN")
	b = binary.BigEndian.AppendUint64(b, files)
	b = binary.BigEndian.AppendUint64(b, nbytes)
	b = binary.BigEndian.AppendUint16(b, uint16(len(reqs)+1))
	b = append(b, reqs...)
	b = append(b, 0)
	body := v1Body(entries, -1, -1)
	i := strings.IndexByte(string(body[2:]), '\n') + 3 // skip "0\n" and the count line
	return append(b, body[i:]...)
}

func TestApplyPacked1(t *testing.T) {
	total := 0
	for _, e := range smallEntries {
		total += len(e.data)
	}
	good := packed1(uint64(len(smallEntries)), uint64(total), testReqs, smallEntries)
	sink, res, err := applyBundleMem(t, good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(sink.files[".hg/store/data/_foo___bar.txt.i"]) != smallEntries[0].data || res.Files != 4 {
		t.Fatalf("files %q result %+v", sink.order, res)
	}
	for _, tc := range []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"compressed", []byte("HGS1BZ" + strings.Repeat("\x00", 18)), ErrUnsupportedPart, "only uncompressed"},
		{"no NUL", append(packed1(4, uint64(total), testReqs, smallEntries)[:22], "\x00\x01x"...), ErrCorrupt, "requirements not properly encoded"},
		{"huge counts", packed1(1<<63, 1<<63, testReqs, nil), ErrCorrupt, "out of range"},
		{"unknown requirement", packed1(4, uint64(total), "revlogv1,weird", smallEntries), ErrUnsupportedRequirement, "unsupported format: weird"},
		{"more files than declared", packed1(3, uint64(total-len(smallEntries[3].data)), testReqs, smallEntries), ErrCorrupt, "data after the 3 declared files"},
		{"fewer files than declared", packed1(5, uint64(total), testReqs, smallEntries), ErrCorrupt, "stream ended unexpectedly"},
		{"bytes mismatch", packed1(4, uint64(total)+1, testReqs, smallEntries), ErrCorrupt, "declared"},
		{"bad name", packed1(1, 1, testReqs, []tEntry{{"../../hgrc", "x"}}), ErrUnsafeName, "hgrc"},
	} {
		sink, _, err := applyBundleMem(t, tc.data, Options{})
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %v with %q", tc.name, err, tc.is, tc.msg)
		}
		if tc.is == ErrUnsupportedRequirement && len(sink.files) > 0 {
			t.Errorf("%s: wrote %q", tc.name, sink.order)
		}
	}
	for i := 0; i < len(good); i++ {
		sink, _, err := applyBundleMem(t, good[:i], Options{})
		if err == nil || sink.finished {
			t.Fatalf("truncated at %d: err %v finished %v", i, err, sink.finished)
		}
	}
}

func FuzzPacked1(f *testing.F) {
	f.Add(packed1(4, 335, testReqs, smallEntries))
	f.Add(packed1(1, 1, "", []tEntry{{"data/x.i", "y"}}))
	if b, err := os.ReadFile("testdata/hg63-packed1.hg"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		applyBundleMem(t, data, Options{})
	})
}
