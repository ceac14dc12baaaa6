package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/testenv"
)

// TestClonePhaseHeadsTruncated: a stream bundle whose phase-heads part
// (hg bundle -t 'none-v2;stream=v2;phases=1') lost its last byte is
// refused by hg unbundle ("bad phase-heads stream") and by hgfs clone,
// which leaves nothing behind.
func TestClonePhaseHeadsTruncated(t *testing.T) {
	testenv.HgPath(t)
	dir := t.TempDir()
	src := cloneFixture(t, dir)
	good := filepath.Join(dir, "good.hg")
	testenv.Hg(t, src, "bundle", "-q", "-a", "-t", "none-v2;stream=v2;phases=1", good)

	// Rewrite the bundle part by part, cutting one byte off phase-heads.
	in, err := os.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	br, err := streamclone.NewBundle2Reader(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	bw, err := streamclone.NewBundle2Writer(&out)
	if err != nil {
		t.Fatal(err)
	}
	cut := false
	for {
		p, err := br.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if p.Type == "phase-heads" {
			if len(data) == 0 || len(data)%24 != 0 {
				t.Fatalf("hg's phase-heads part has %d bytes", len(data))
			}
			data, cut = data[:len(data)-1], true
		}
		if err := bw.WritePart(p.Type, p.Mandatory, p.MandatoryParams, p.AdvisoryParams, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	if !cut {
		t.Fatal("hg's bundle has no phase-heads part")
	}
	bad := filepath.Join(dir, "bad.hg")
	if err := os.WriteFile(bad, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	testenv.Hg(t, dir, "init", "oracle")
	_, hgErr, err := testenv.HgResult(t, filepath.Join(dir, "oracle"), "unbundle", "-q", bad)
	if err == nil || !strings.Contains(string(hgErr), "abort: bad phase-heads stream") {
		t.Fatalf("hg unbundle of the cut bundle: %v\n%s", err, hgErr)
	}
	dest := filepath.Join(dir, "dest")
	stdout, stderr, code := hgfsClone(t, dir, bad, dest)
	if code != 255 || !strings.Contains(stderr, "bad phase-heads stream") {
		t.Fatalf("hgfs clone of the cut bundle: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("destination left behind: %v", err)
	}
	// hg's own bundle goes through: the cut is what is refused.
	if stdout, stderr, code := hgfsClone(t, dir, good, filepath.Join(dir, "dest-good"), "-U"); code != 0 {
		t.Fatalf("hgfs clone of hg's bundle: exit %d\n%s%s", code, stdout, stderr)
	}
}
