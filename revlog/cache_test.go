package revlog

import "testing"

func TestTextCache(t *testing.T) {
	c := textCache{maxItems: 3, maxBytes: 10}
	c.add(1, []byte("aaa"))
	c.add(2, []byte("bbb"))
	c.add(3, []byte("ccc"))
	if _, ok := c.get(1); !ok { // 1 becomes most recent
		t.Fatal("1 missing")
	}
	c.add(4, []byte("d")) // evicts 2 (least recent)
	if _, ok := c.get(2); ok {
		t.Error("2 not evicted")
	}
	for _, r := range []int{1, 3, 4} {
		if _, ok := c.get(r); !ok {
			t.Errorf("%d missing", r)
		}
	}
	c.add(5, []byte("eeeeeeee")) // byte bound: evicts until it fits
	if c.bytes > 10 {
		t.Errorf("bytes %d over bound", c.bytes)
	}
	c.add(6, make([]byte, 11)) // larger than the cache: not kept
	if _, ok := c.get(6); ok {
		t.Error("oversized text cached")
	}
	c.add(5, []byte("e")) // replace keeps accounting right
	sum := 0
	for _, e := range c.entries {
		sum += len(e.text)
	}
	if c.bytes != sum || len(c.entries) > 3 {
		t.Errorf("bytes %d, entries hold %d in %d", c.bytes, sum, len(c.entries))
	}
	c.clear()
	if _, ok := c.get(5); ok || c.bytes != 0 {
		t.Error("clear")
	}
}
