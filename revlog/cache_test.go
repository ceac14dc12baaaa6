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

// TestTextCacheMinItems: with minItems the byte bound evicts only older
// texts, and a text larger than the bound is kept with the ones before
// it up to minItems.
func TestTextCacheMinItems(t *testing.T) {
	c := textCache{maxItems: 8, maxBytes: 10, minItems: 2}
	c.add(1, []byte("aaaa"))
	c.add(2, []byte("bbbb"))
	c.add(3, make([]byte, 12)) // over the bound alone: kept, with 2
	for _, r := range []int{2, 3} {
		if _, ok := c.get(r); !ok {
			t.Errorf("%d missing", r)
		}
	}
	if _, ok := c.get(1); ok {
		t.Error("1 kept past the byte bound")
	}
	c.add(4, make([]byte, 20))
	if len(c.entries) != 2 || c.entries[0].rev != 3 || c.entries[1].rev != 4 || c.bytes != 32 {
		t.Errorf("entries %v, %d bytes; want revisions 3 and 4, 32 bytes", revs(c.entries), c.bytes)
	}
	c.add(5, []byte("e")) // fits beside neither large text: 4 and 5 stay
	if len(c.entries) != 2 || c.entries[0].rev != 4 || c.bytes != 21 {
		t.Errorf("entries %v, %d bytes; want revisions 4 and 5, 21 bytes", revs(c.entries), c.bytes)
	}
	c.add(6, []byte("f"))
	c.add(7, []byte("g")) // small texts again: the byte bound holds
	if c.bytes > 10 || len(c.entries) != 3 {
		t.Errorf("entries %v, %d bytes; want 5, 6 and 7 within 10 bytes", revs(c.entries), c.bytes)
	}
}

func revs(es []cachedText) []int {
	var out []int
	for _, e := range es {
		out = append(out, e.rev)
	}
	return out
}
