package bundle2

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Every decoder returns an error, never panics, on any input; what
// decodes re-encodes to something that decodes to the same value.

func FuzzReader(f *testing.F) {
	for _, name := range []string{"hg63-getbundle-stream2.hg", "hg63-bundle-stream2.hg"} {
		if b, err := os.ReadFile("../streamclone/testdata/" + name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("HG20\x00\x00\x00\x0eCompression=GZx\x9c\x03\x00\x00\x00\x00\x01"))
	f.Add([]byte("HG20\x00\x00\x00\x00" + string(rawPart("output", 0, nil, nil)) + "\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte("HG20\x00\x00\x00\x00" + string(rawPart("OUTPUT", 0, nil, nil)) + "\xff\xff\xff\xff" + string(rawPart("error:abort", 1, []Param{{"message", "m"}}, nil))))
	f.Fuzz(func(t *testing.T, data []byte) {
		readAllParts(t, data)
	})
}

func FuzzPartHeader(f *testing.F) {
	for _, h := range [][]byte{
		rawPart("STREAM2", 0, []Param{{"bytecount", "10"}, {"filecount", "1"}, {"requirements", "revlogv1"}}, nil),
		rawPart("listkeys", 7, []Param{{"namespace", "bookmarks"}}, []Param{{"adv", ""}}),
		rawPart("error:abort", 1, nil, []Param{{"message", "m"}, {"hint", "h"}}),
		rawPart("a/b", 0, nil, nil),
	} {
		f.Add(h[4:])
	}
	f.Add([]byte("\x05a"))
	f.Fuzz(func(t *testing.T, h []byte) {
		p, err := parsePartHeader(h)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		if p.Type == "" {
			return // read (and skipped, being advisory) but never written
		}
		enc, err := encodePartHeader(p.Type, p.Mandatory, p.ID, p.MandatoryParams, p.AdvisoryParams)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", p, err)
		}
		q, err := parsePartHeader(enc)
		if err != nil || q.Type != p.Type || q.Mandatory != p.Mandatory || q.ID != p.ID ||
			!reflect.DeepEqual(q.MandatoryParams, p.MandatoryParams) || !reflect.DeepEqual(q.AdvisoryParams, p.AdvisoryParams) {
			t.Fatalf("round trip: %+v -> %+v (%v)", p, q, err)
		}
	})
}

func FuzzStreamParams(f *testing.F) {
	f.Add("Compression=GZ")
	f.Add("someparam=a%20b%2Cc other")
	f.Add("a  b")
	f.Add("Foo=%zz")
	f.Add("1=x")
	f.Fuzz(func(t *testing.T, block string) {
		params, comp, err := parseStreamParams(block)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v is neither ErrMalformed nor ErrUnsupported", err)
			}
			return
		}
		enc, err := encodeStreamParams(params)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", params, err)
		}
		params2, comp2, err := parseStreamParams(enc)
		if err != nil || comp2 != comp {
			t.Fatalf("round trip of %q: %q %q %v", block, enc, comp2, err)
		}
		// A parameter without value and one with an empty value encode
		// alike (hg does not tell them apart either).
		if len(params2) != len(params) {
			t.Fatalf("round trip of %q: %q", params, params2)
		}
		for i := range params {
			if params[i] != params2[i] {
				t.Fatalf("round trip of %q: %q", params, params2)
			}
		}
	})
}

func FuzzBookmarks(f *testing.F) {
	data, _ := EncodeBookmarks(map[string][20]byte{"a": {1}, "b": {2}}, []string{"gone"})
	f.Add(data)
	f.Add([]byte("\x01\x02"))
	f.Add(append(make([]byte, 20), 0, 5, 'a'))
	f.Fuzz(func(t *testing.T, data []byte) {
		marks, deleted, err := DecodeBookmarks(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		enc, err := EncodeBookmarks(marks, nil)
		if err != nil {
			t.Fatal(err)
		}
		marks2, deleted2, err := DecodeBookmarks(bytes.NewReader(enc))
		if err != nil || len(deleted2) != 0 || !reflect.DeepEqual(marks, marks2) {
			t.Fatalf("round trip: %v -> %v %v (%v)", marks, marks2, deleted2, err)
		}
		_ = deleted
	})
}

func FuzzDecodeKeys(f *testing.F) {
	f.Add([]byte("bm1\t8cfdfd66ca5f2f4e0e36d5a6b6f4fb1d0a0e1e5c\nbm2\t0000000000000000000000000000000000000000"))
	f.Add([]byte("publishing\tTrue"))
	f.Add([]byte("a\tb\tc\n\r\n"))
	f.Add([]byte("a\t1\r\nb\t2\rc\t"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := DecodeKeys(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrMalformedKeys) {
				t.Fatalf("error %v is not ErrMalformedKeys", err)
			}
			return
		}
		if keys == nil {
			t.Fatal("nil map without error")
		}
		keys2, err := DecodeKeys(bytes.NewReader(EncodeKeys(keys)))
		if err != nil || !reflect.DeepEqual(keys, keys2) {
			t.Fatalf("round trip: %q -> %q (%v)", keys, keys2, err)
		}
		if marks, err := DecodeBookmarkKeys(keys); err == nil && len(marks) != len(keys) {
			t.Fatalf("bookmark keys %v of %q", marks, keys)
		}
	})
}

func FuzzUnquote(f *testing.F) {
	f.Add("a%2Cb%2cc%zz%")
	f.Add("HG20%0Abookmarks")
	f.Add("%4")
	f.Add("\xff/ ~")
	f.Fuzz(func(t *testing.T, s string) {
		u := Unquote(s)
		if len(u) > len(s) || (!strings.Contains(s, "%") && u != s) {
			t.Fatalf("Unquote(%q) = %q", s, u)
		}
		q := Quote(s)
		if Unquote(q) != s {
			t.Fatalf("Unquote(Quote(%q)) = %q", s, Unquote(q))
		}
		if Quote(Unquote(q)) != q {
			t.Fatalf("Quote is not canonical for %q", s)
		}
	})
}
