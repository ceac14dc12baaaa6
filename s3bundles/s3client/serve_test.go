package s3client

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestServeBadRequests: what is not a request the helper can run is
// refused with exit status 2 and says why, touching no store.
func TestServeBadRequests(t *testing.T) {
	for in, want := range map[string]string{
		"garbage":                               "reading the request",
		`{"Op":"nope"}`:                         `unknown operation "nope"`,
		`{"Op":"get","Extra":1}`:                `unknown field "Extra"`,
		`{"Op":"get","Target":{"Bucket":"b"}} `: "", // runs: an error of its own below
	} {
		var out, errb bytes.Buffer
		code := Serve(context.Background(), strings.NewReader(in), &out, &errb)
		if want == "" {
			if code != 1 || !strings.Contains(errb.String(), "names no object") || out.Len() != 0 {
				t.Errorf("%s: exit %d, stderr %q, %d bytes out", in, code, errb.String(), out.Len())
			}
			continue
		}
		if code != 2 || !strings.Contains(errb.String(), want) || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", in, code, errb.String(), want)
		}
	}
}
