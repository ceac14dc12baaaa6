package dirstate

import (
	"strings"
	"testing"
)

// TestParseV1FirstErrorFirst: with an entry of an unknown state followed
// by a truncated one, the unknown state is reported, as a parse in one
// pass (hg's) finds it first.
func TestParseV1FirstErrorFirst(t *testing.T) {
	data := make([]byte, v1ParentsSize)
	data = append(data, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'a') // state 'x', name "a"
	data = append(data, 1, 2, 3)                                                  // a header cut short
	_, err := ParseV1(data)
	if err == nil || !strings.Contains(err.Error(), "unknown state") {
		t.Errorf("got %v, want the unknown state", err)
	}
	_, err = ParseV1(data[:len(data)-3+1])
	if err == nil || !strings.Contains(err.Error(), "unknown state") {
		t.Errorf("got %v, want the unknown state", err)
	}
	ok := make([]byte, v1ParentsSize)
	ok = append(ok, 'n', 0, 0, 0x81, 0xa4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 'a')
	if _, err := ParseV1(append(ok, 1, 2, 3)); err == nil || !strings.Contains(err.Error(), "truncated entry") {
		t.Errorf("got %v, want the truncated entry", err)
	}
}
