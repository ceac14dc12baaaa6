package changegroup

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
)

// transcode writes groups to w, rewriting deltas cg1 cannot carry (a base
// other than the previous node) as full replacements of the implied base.
func transcode(t testing.TB, groups []group, w *Writer) {
	t.Helper()
	for _, g := range groups {
		if err := w.StartGroup(g.kind, g.name); err != nil {
			t.Fatal(err)
		}
		texts := map[[20]byte][]byte{{}: nil}
		var prev [20]byte
		for i, d := range g.deltas {
			text, err := revlog.Patch(texts[d.Base], d.Data)
			if err != nil {
				t.Fatal(err)
			}
			texts[d.Node] = text
			nd := d
			if w.Version() == Version1 {
				implied := prev
				if i == 0 {
					implied = d.P1
				}
				if d.Base != implied {
					base, ok := texts[implied]
					if !ok {
						t.Fatalf("%v %q: implied base %x unknown", g.kind, g.name, implied)
					}
					nd.Base, nd.Data = implied, ReplaceDelta(len(base), text)
				}
			}
			if err := w.WriteDelta(&nd); err != nil {
				t.Fatal(err)
			}
			prev = d.Node
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterIdentity: re-encoding hg's own cg1 delta by delta gives hg's
// bytes back.
func TestWriterIdentity(t *testing.T) {
	root := testenv.Generate(t, testenv.Small)
	data, err := os.ReadFile(hgBundle(t, root, "none-v1"))
	if err != nil {
		t.Fatal(err)
	}
	d := readBundleFile(t, hgBundle(t, root, "none-v1"))
	var buf bytes.Buffer
	w, err := NewBundleWriter(&buf, BundleOptions{Type: "HG10UN"})
	if err != nil {
		t.Fatal(err)
	}
	transcode(t, d.groups, w)
	if !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("re-encoded HG10UN bundle differs from hg's (%d vs %d bytes)", buf.Len(), len(data))
	}
}

func TestWriterMisuse(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, "04"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("version 04: %v", err)
	}
	w, _ := NewWriter(&buf, Version1)
	if err := w.WriteDelta(&Delta{}); err == nil {
		t.Error("WriteDelta before StartGroup succeeded")
	}
	w.StartGroup(Changelog, "")
	if err := w.WriteDelta(&Delta{Base: [20]byte{1}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("cg1 delta against a non-implied base: %v", err)
	}
	if err := w.WriteDelta(&Delta{Flags: 1}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("cg1 flags: %v", err)
	}
	w.StartGroup(File, "a")
	if err := w.StartGroup(Manifest, ""); err == nil {
		t.Error("manifest after a file group accepted")
	}
	if err := w.StartGroup(File, ""); err == nil {
		t.Error("empty file name accepted")
	}
	for _, opt := range []BundleOptions{{Type: "HG10BZ"}, {Type: "HG10UN", Version: "02"}, {Type: "HG10GZ", NbChanges: 3}} {
		if _, err := NewBundleWriter(&buf, opt); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%+v: %v", opt, err)
		}
	}
}

// TestEmptyChangegroup: a changegroup with no groups started is the
// minimal valid one, in every version.
func TestEmptyChangegroup(t *testing.T) {
	want := map[string]int{Version1: 12, Version2: 12, Version3: 16}
	for v, n := range want {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, v)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if buf.Len() != n || strings.Trim(buf.String(), "\x00") != "" {
			t.Errorf("version %s: empty changegroup %q, want %d zero bytes", v, buf.Bytes(), n)
		}
		cg, _ := NewReader(&buf, v)
		gs, err := readAll(cg)
		if err != nil || len(gs) != 2 || len(gs[0].deltas)+len(gs[1].deltas) != 0 {
			t.Errorf("version %s: read back %v, %v", v, gs, err)
		}
	}

}
