package hgview

import (
	"testing"
)

func FuzzReadTags(f *testing.F) {
	f.Add([]byte("0123456789012345678901234567890123456789 v1\n\nbad line\n0123456789012345678901234567890123456789  spaced \r\n"))
	f.Add([]byte("zz v\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		all := map[string]tagEntry{}
		updateTags(readTags(data), all)
		updateTags(readTags(data), all)
	})
}
