package store

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	longest := "data/" + strings.Repeat("x", MaxNameLen-7) + ".i"
	good := []string{"data/foo.i", "00changelog.i", "data/a b/c.d", "data/.hg/x.i", "data/c:/x.i", "data/...i", "phaseroots", "data/ü.i", longest}
	bad := []string{"", "/etc/passwd", "../x", "data/../../x.i", "data/./x.i", "data//x.i", "data/x/", "./x", ".", "..",
		"data/x\x00.i", "data/x\n.i", "data/x\r.i", "data\\..\\x.i", "c:/x.i", "C:x", "data/x/..", "/", "data/x" + longest[5:]}
	for _, n := range good {
		if err := ValidateName(n); err != nil {
			t.Errorf("ValidateName(%q) = %v", n, err)
		}
	}
	for _, n := range bad {
		err := ValidateName(n)
		if !errors.Is(err, ErrBadStoreName) {
			t.Errorf("ValidateName(%q) = %v, want ErrBadStoreName", n, err)
		} else if quoted := strconv.Quote(n[:min(len(n), 64)]); len(n) > 64 {
			// A name too long to print is named by its start.
			if !strings.Contains(err.Error(), quoted[:len(quoted)-1]) || len(err.Error()) > 200 {
				t.Errorf("error %q does not name the start of %q, or is long", err, n[:64])
			}
		} else if !strings.Contains(err.Error(), quoted) {
			t.Errorf("error %q does not name %q", err, n)
		}
	}
}

func TestValidateStreamName(t *testing.T) {
	for _, n := range []string{"data/foo.i", "data/foo.d", "meta/d/00manifest.i", "00changelog.i", "00changelog.n", "00changelog-ab.nd", "phaseroots", "obsstore"} {
		if err := ValidateStreamName(n); err != nil {
			t.Errorf("ValidateStreamName(%q) = %v", n, err)
		}
	}
	for _, n := range []string{"hgrc", "requires", "fncache", "store/data/x.i", "cache/x.i", "data/x.txt", "../data/x.i", "bookmarks", "dirstate"} {
		if err := ValidateStreamName(n); !errors.Is(err, ErrBadStoreName) {
			t.Errorf("ValidateStreamName(%q) = %v, want ErrBadStoreName", n, err)
		}
	}
	for _, n := range CacheFileNames() {
		if err := ValidateCacheName(n); err != nil {
			t.Errorf("ValidateCacheName(%q) = %v", n, err)
		}
	}
	for _, n := range []string{"", "../hgrc", "sub/x", "."} {
		if err := ValidateCacheName(n); !errors.Is(err, ErrBadStoreName) {
			t.Errorf("ValidateCacheName(%q) = %v", n, err)
		}
	}
}

func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"data/foo.i", "../x", "/abs", "c:x", "a//b", "a/./b", "a\\b", "x\x00", "data/.hg/hgrc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidateName(name)
		if err != nil {
			if !errors.Is(err, ErrBadStoreName) {
				t.Fatalf("error %v does not wrap ErrBadStoreName", err)
			}
			_ = ValidateStreamName(name)
			return
		}
		// An accepted name stays inside the directory it is joined to.
		if name == "" || name[0] == '/' || strings.ContainsAny(name, "\x00\n\r\\") {
			t.Fatalf("accepted %q", name)
		}
		for c := range strings.SplitSeq(name, "/") {
			if c == "" || c == "." || c == ".." {
				t.Fatalf("accepted %q with component %q", name, c)
			}
		}
		// Its encodings are accepted too (a v1 stream sends EncodeDir'd
		// names, the sink writes HybridEncode'd ones).
		if err := ValidateName(EncodeDir(name)); err != nil {
			t.Fatalf("EncodeDir(%q) rejected: %v", name, err)
		}
		// HybridEncode's hashed form drops the 5-byte "data/" or "meta/"
		// prefix, so it is only defined for names under those or at the
		// top (what ValidateStreamName lets through to it); elsewhere a
		// "/" after the fifth byte leaves an empty component, in hg too.
		for _, dotencode := range []bool{false, true} {
			if strings.Contains(name, "/") && !InFncache(name) {
				break
			}
			if e := HybridEncode(name, dotencode); ValidateName(e) != nil || checkEncodedBytes(e) != nil {
				t.Fatalf("HybridEncode(%q, %v) = %q rejected", name, dotencode, e)
			}
		}
		if e := EncodeFilename(name); ValidateName(e) != nil {
			t.Fatalf("EncodeFilename(%q) = %q rejected", name, e)
		}
	})
}
