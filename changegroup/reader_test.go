package changegroup

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/store"
)

func node(b byte) [20]byte {
	var n [20]byte
	for i := range n {
		n[i] = b
	}
	return n
}

// sampleCG encodes a small changegroup: two changesets, one manifest
// revision, two files (one with two revisions).
func sampleCG(t testing.TB, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, version)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.StartGroup(Changelog, ""))
	must(w.WriteDelta(&Delta{Node: node(1), LinkNode: node(1), Data: FullDelta([]byte("cs1"))}))
	must(w.WriteDelta(&Delta{Node: node(2), P1: node(1), Base: node(1), LinkNode: node(2), Data: ReplaceDelta(3, []byte("cs2"))}))
	must(w.StartGroup(Manifest, ""))
	must(w.WriteDelta(&Delta{Node: node(3), LinkNode: node(1), Data: FullDelta([]byte("a\x00"))}))
	must(w.StartGroup(File, "a"))
	must(w.WriteDelta(&Delta{Node: node(4), LinkNode: node(1), Data: FullDelta([]byte("x"))}))
	must(w.WriteDelta(&Delta{Node: node(5), P1: node(4), Base: node(4), LinkNode: node(2), Data: ReplaceDelta(1, []byte("y"))}))
	must(w.StartGroup(File, "dir/b"))
	var flags uint16
	if version == Version3 {
		flags = 0x2000
	}
	must(w.WriteDelta(&Delta{Node: node(6), LinkNode: node(2), Flags: flags, Data: nil}))
	must(w.Close())
	return buf.Bytes()
}

func TestReaderRoundTrip(t *testing.T) {
	for _, v := range []string{Version1, Version2, Version3} {
		cg, err := NewReader(bytes.NewReader(sampleCG(t, v)), v)
		if err != nil {
			t.Fatal(err)
		}
		gs, err := readAll(cg)
		if err != nil {
			t.Fatalf("version %s: %v", v, err)
		}
		var got []string
		for _, g := range gs {
			for _, d := range g.deltas {
				got = append(got, fmt.Sprintf("%v:%s:%x:%x:%x:%#x:%q", g.kind, g.name, d.Node[0], d.Base[0], d.LinkNode[0], d.Flags, d.Data))
			}
		}
		flags := "0x0"
		if v == Version3 {
			flags = "0x2000"
		}
		want := []string{
			`changelog::1:0:1:0x0:"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03cs1"`,
			`changelog::2:1:2:0x0:"\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x03cs2"`,
			`manifest::3:0:1:0x0:"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02a\x00"`,
			`file:a:4:0:1:0x0:"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01x"`,
			`file:a:5:4:2:0x0:"\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01y"`,
			`file:dir/b:6:0:2:` + flags + `:""`,
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("version %s:\n got %q\nwant %q", v, got, want)
		}
	}
}

// TestReaderSkips: NextGroup skips what is left of a group.
func TestReaderSkips(t *testing.T) {
	cg, _ := NewReader(bytes.NewReader(sampleCG(t, Version2)), Version2)
	var names []string
	for {
		k, name, err := cg.NextGroup()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, k.String()+":"+name)
	}
	if fmt.Sprint(names) != "[changelog: manifest: file:a file:dir/b]" {
		t.Errorf("groups %v", names)
	}
	if _, _, err := cg.NextGroup(); err != io.EOF {
		t.Errorf("NextGroup after the end: %v", err)
	}
}

// chunk frames data as a changegroup chunk.
func chunk(data string) string {
	return string(binary.BigEndian.AppendUint32(nil, uint32(len(data)+4))) + data
}

const empty = "\x00\x00\x00\x00"

func TestReaderBadInput(t *testing.T) {
	hdr2 := strings.Repeat("\x01", 100)
	cases := []struct {
		name, version, data string
		want                error
	}{
		{"empty stream", "02", "", ErrCorrupt},
		{"chunk length 4", "02", "\x00\x00\x00\x04", ErrCorrupt},
		{"chunk length 1", "02", "\x00\x00\x00\x01", ErrCorrupt},
		{"negative chunk length", "02", "\xff\xff\xff\xf0", ErrCorrupt},
		{"chunk shorter than header", "02", chunk("short"), ErrCorrupt},
		{"huge chunk length, no data", "02", "\x7f\xff\xff\xff" + hdr2, ErrCorrupt},
		{"truncated delta", "02", "\x00\x01\x00\x00" + hdr2 + "abc", ErrCorrupt},
		{"no file list end", "02", empty + empty, ErrCorrupt},
		{"absolute name", "02", empty + empty + chunk("/etc/passwd") + empty + empty, ErrCorrupt},
		{"dotdot name", "02", empty + empty + chunk("a/../../x") + empty + empty, ErrCorrupt},
		{"NUL in name", "02", empty + empty + chunk("a\x00b") + empty + empty, ErrCorrupt},
		{"newline in name", "02", empty + empty + chunk("a\nb") + empty + empty, ErrCorrupt},
		{"huge name", "02", empty + empty + "\x7f\x00\x00\x00abc", ErrCorrupt},
		{"tree manifests", "03", empty + empty + chunk("dir/") + empty + empty + empty, ErrUnsupported},
		{"cg3 without tree list end", "03", empty + empty + empty, ErrCorrupt},
	}
	for _, c := range cases {
		cg, err := NewReader(strings.NewReader(c.data), c.version)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll(cg)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		// Errors are sticky.
		if _, _, err2 := cg.NextGroup(); err != nil && err2 != err {
			t.Errorf("%s: after %v, NextGroup gave %v", c.name, err, err2)
		}
	}
	if _, err := NewReader(strings.NewReader(""), "04"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("version 04: %v", err)
	}
}

// TestReaderBoundedAlloc: a chunk claiming 2 GiB with a few bytes behind
// it allocates no more than the bytes that arrived justify.
func TestReaderBoundedAlloc(t *testing.T) {
	data := "\x7f\xff\xff\xff" + strings.Repeat("\x01", 100) + "abc"
	cg, _ := NewReader(strings.NewReader(data), Version2)
	cg.NextGroup()
	var d Delta
	_, err := cg.NextDelta(&d)
	mustCorrupt(t, "2 GiB chunk", err)
	if c := cap(cg.buf); c > initialDataAlloc {
		t.Errorf("delta buffer grew to %d bytes for 3 bytes of data", c)
	}
}

// TestCG1Base: cg1 deltas apply to the previous node of the group, or p1
// for the first; the chain restarts with each group.
func TestCG1Base(t *testing.T) {
	cg, _ := NewReader(bytes.NewReader(sampleCG(t, Version1)), Version1)
	gs, err := readAll(cg)
	if err != nil {
		t.Fatal(err)
	}
	if b := gs[0].deltas[1].Base; b != node(1) {
		t.Errorf("second changelog delta base %x, want the previous node", b)
	}
	if b := gs[2].deltas[0].Base; b != ([20]byte{}) {
		t.Errorf("first file delta base %x, want its p1 (null)", b)
	}
}

func TestCheckPath(t *testing.T) {
	// The longest path whose filelog name hg can store, and one byte more.
	longest := strings.Repeat("x", store.MaxNameLen-len("data/.i"))
	if store.ValidateName("data/"+longest+".i") != nil || store.ValidateName("data/"+longest+"x.i") == nil {
		t.Fatal("maxPathLen does not follow store.MaxNameLen")
	}
	for _, ok := range []string{"a", "a/b", ".hgtags", "a/.hg/b", "..a", "a..", "a b", longest} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/a", "..", "a/..", "../a", "a/./b", "a//b", "a/", "a\x00", "a\nb", "a\rb", longest + "x"} {
		if err := CheckPath(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzReader walks a raw changegroup of each version: any input gives
// groups and deltas or an error, never a panic or a hang.
func FuzzReader(f *testing.F) {
	for i, v := range []string{Version1, Version2, Version3} {
		f.Add(byte(i), sampleCG(f, v))
	}
	f.Add(byte(1), []byte(empty+empty+chunk("a")+"\x00\x01\x00\x00"))
	f.Add(byte(2), []byte(empty+empty+chunk("d/")+empty+empty+empty))
	f.Fuzz(func(t *testing.T, v byte, data []byte) {
		version := []string{Version1, Version2, Version3}[int(v)%3]
		cg, err := NewReader(bytes.NewReader(data), version)
		if err != nil {
			t.Fatal(err)
		}
		_, err = readAll(cg)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("error wraps neither ErrCorrupt nor ErrUnsupported: %v", err)
		}
	})
}
