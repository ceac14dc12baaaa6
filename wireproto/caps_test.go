package wireproto

import (
	"reflect"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
)

// A capabilities response as hg 6.3's hg serve sends it.
const hgServeCaps = "batch branchmap bundle2=HG20%0Abookmarks%0Achangegroup%3D01%2C02%0Acheckheads%3Drelated%0Adigests%3Dmd5%2Csha1%2Csha512%0Aerror%3Dabort%2Cunsupportedcontent%2Cpushraced%2Cpushkey%0Ahgtagsfnodes%0Alistkeys%0Aphases%3Dheads%0Apushkey%0Aremote-changegroup%3Dhttp%2Chttps%0Astream%3Dv2 changegroupsubset compression=zstd,zlib getbundle httpheader=1024 httpmediatype=0.1rx,0.1tx,0.2tx known lookup pushkey streamreqs=generaldelta,revlog-compression-zstd,revlogv1,sparserevlog unbundle=HG10GZ,HG10BZ,HG10UN unbundlehash"

func TestParseCaps(t *testing.T) {
	c, err := ParseCaps([]byte(hgServeCaps))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Get("httpheader"); !ok || v != "1024" {
		t.Errorf("httpheader = %q, %v", v, ok)
	}
	if v, _ := c.Get("streamreqs"); v != "generaldelta,revlog-compression-zstd,revlogv1,sparserevlog" {
		t.Errorf("streamreqs = %q", v)
	}
	if !c.Has("batch") || c.Has("stream") || c.Has("bat") {
		t.Errorf("Has wrong: %v", c)
	}
	if c.String() != hgServeCaps {
		t.Errorf("String() = %q", c.String())
	}
	b2, err := c.Bundle2()
	if err != nil {
		t.Fatal(err)
	}
	if !b2.HasValue("stream", "v2") || !b2.Has("bookmarks") || b2.HasValue("stream", "v1") {
		t.Errorf("bundle2 caps %v", b2)
	}
	if got := b2["error"]; !reflect.DeepEqual(got, []string{"abort", "unsupportedcontent", "pushraced", "pushkey"}) {
		t.Errorf("error = %q", got)
	}
	if got := b2["HG20"]; got != nil {
		t.Errorf("HG20 = %q, want no values", got)
	}
	// Round trip of the blob, as bundle2.encodecaps writes it.
	blob := bundle2.Unquote(c["bundle2"])
	if b2.Encode() != blob {
		t.Errorf("Encode = %q\nwant %q", b2.Encode(), blob)
	}
}

func TestParseCapsErrors(t *testing.T) {
	if _, err := ParseCaps([]byte("a =b")); err == nil {
		t.Error("empty capability name accepted")
	}
	c, err := ParseCaps(nil)
	if err != nil || len(c) != 0 {
		t.Errorf("empty: %v %v", c, err)
	}
	b2, err := Caps{}.Bundle2()
	if err != nil || len(b2) != 0 {
		t.Errorf("no bundle2: %v %v", b2, err)
	}
}

func TestFormEncode(t *testing.T) {
	if got := formEncode(map[string]string{"namespace": "a b/c", "cmd": "x=y&z"}); got != "cmd=x%3Dy%26z&namespace=a+b%2Fc" {
		t.Errorf("formEncode = %q", got)
	}
}

func FuzzParseCaps(f *testing.F) {
	f.Add([]byte(hgServeCaps))
	f.Add([]byte("bundle2=%zz%0A%3D stream streamreqs=revlogv1"))
	f.Add([]byte("bundle2=a%3D%2C%2C%0A%0A%0Ab"))
	f.Add([]byte("=\x00 a=b=c"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCaps(data)
		if err != nil {
			return
		}
		// Re-parsing the rendering gives the same set.
		c2, err := ParseCaps([]byte(c.String()))
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip: %v vs %v (%v)", c, c2, err)
		}
		b2, err := c.Bundle2()
		if err != nil {
			return
		}
		if _, err := DecodeBundle2Caps(b2.Encode()); err != nil {
			t.Fatalf("re-decode of encoded bundle2 caps: %v", err)
		}
	})
}

func FuzzDecodeKeys(f *testing.F) {
	f.Add([]byte("bm1\t8cfdfd66ca5f2f4e0e36d5a6b6f4fb1d0a0e1e5c\nbm2\t0000000000000000000000000000000000000000"))
	f.Add([]byte("publishing\tTrue"))
	f.Add([]byte("a\tb\tc\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := decodeKeys(data)
		if err == nil && keys == nil {
			t.Fatal("nil map without error")
		}
		_, _ = DecodeNodes(string(data))
		_, _ = decodeHeads(data)
		_, _ = decodeLookup(data)
	})
}
