package bundle2

import (
	"errors"
	"strings"
	"testing"
)

// TestParseSpec checks ParseSpec against what hg 7.2's
// bundlecaches.parsebundlespec(strict=True) answers for the same
// strings (hg 6.3 differs only in knowing neither v3 nor stream=v3-exp).
func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		spec string
		want string // "comp wirecomp version wireversion isstream", or the error
	}{
		{"none-v1", "none UN v1 01 false"},
		{"gzip-v1", "gzip GZ v1 01 false"},
		{"bzip2-v1", "bzip2 BZ v1 01 false"},
		{"zstd-v1", "unsupported: compression engine zstd is not supported on v1 bundles"},
		{"none-v2", "none UN v2 02 false"},
		{"zstd-v2", "zstd ZS v2 02 false"},
		{"gzip-v2", "gzip GZ v2 02 false"},
		{"bzip2-v2", "bzip2 BZ v2 02 false"},
		{"none-bundle2", "none UN bundle2 02 false"},
		{"none-packed1", "none UN packed1 s1 true"},
		{"none-packed1;requirements%3Drevlogv1", `invalid: invalid bundle specification: missing "=" in parameter: requirements%3Drevlogv1`},
		{"none-v2;stream=v2", "none UN v2 02 true"},
		{"zstd-v2;stream=v2", "zstd ZS v2 02 false"},
		{"none-streamv2", "none UN v2 02 true"},
		{"none-v2;stream=v3-exp", "none UN v2 02 true"},
		{"none-v3", "none UN v3 03 false"},
		{"xz-v2", "unsupported: xz compression is not supported"},
		{"v2", "invalid: invalid bundle specification; must be prefixed with compression: v2"},
		{"none-v2;phases=yes;obsolescence=0", "none UN v2 02 false"},
		{"none-v2;phases=maybe", "invalid: parameter phases should be a boolean ('maybe')"},
		{"none-v2;cg.version=03", "none UN v2 02 false"},
		{"none-v2;bad", `invalid: invalid bundle specification: missing "=" in parameter: bad`},
		{"none-v9", "unsupported: v9 is not a recognized bundle version"},
		{"gzip-packed1", "gzip GZ packed1 s1 false"},
		{"none-v2;a%3Db=c%20d", "none UN v2 02 false"},
		{"", "invalid: invalid bundle specification; must be prefixed with compression: "},
	} {
		s, err := ParseSpec(c.spec)
		var got string
		switch {
		case errors.Is(err, ErrInvalidSpec):
			got = "invalid: " + err.Error()
			if !strings.HasPrefix(c.want, "invalid: invalid") {
				got = "invalid: " + strings.TrimPrefix(err.Error(), ErrInvalidSpec.Error()+": ")
			}
		case errors.Is(err, ErrUnsupportedSpec):
			got = "unsupported: " + strings.TrimPrefix(err.Error(), ErrUnsupportedSpec.Error()+": ")
		case err != nil:
			got = "error: " + err.Error()
		default:
			got = strings.Join([]string{s.Compression, s.WireCompression, s.Version, s.WireVersion}, " ")
			if s.IsStreamClone() {
				got += " true"
			} else {
				got += " false"
			}
		}
		if got != c.want {
			t.Errorf("ParseSpec(%q) = %s, want %s", c.spec, got, c.want)
		}
	}
	s, err := ParseSpec("none-v2;a%3Db=c%20d;requirements=revlogv1%2Cstore")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Param("a=b"); v != "c d" {
		t.Errorf("unquoted parameter: %q", v)
	}
	if r := s.Requirements(); strings.Join(r, "|") != "revlogv1|store" {
		t.Errorf("requirements: %q", r)
	}
}

// FuzzParseSpec: any string gives a spec or one of the two errors.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"none-v2;stream=v2", "zstd-v2", "gzip-v1", "none-packed1;requirements=generaldelta%2Crevlogv1",
		"none-v2;phases=yes;obsolescence=0", "none-v2;a%3Db=c%20d", "v2", "none-v2;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseSpec(spec)
		if err != nil {
			if !errors.Is(err, ErrInvalidSpec) && !errors.Is(err, ErrUnsupportedSpec) {
				t.Fatalf("ParseSpec(%q): %v", spec, err)
			}
			return
		}
		if s.WireCompression == "" || s.WireVersion == "" || s.Version == "" {
			t.Fatalf("ParseSpec(%q) = %+v", spec, s)
		}
	})
}
