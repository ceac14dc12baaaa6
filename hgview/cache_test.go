package hgview

import (
	"testing"
)

func TestCacheBound(t *testing.T) {
	c := newLRU(100)
	c.add("a", []byte("x"), 60)
	c.add("b", []byte("y"), 30)
	c.get("a")
	c.add("c", []byte("z"), 30) // evicts b, the least recently used
	if _, ok := c.get("b"); ok {
		t.Error("b not evicted")
	}
	if _, ok := c.get("a"); !ok {
		t.Error("a evicted")
	}
	c.add("big", nil, 101)
	if _, ok := c.get("big"); ok || c.bytes() > 100 {
		t.Errorf("over bound: %d", c.bytes())
	}
}

// bytes reports the cached total, for tests.
func (c *lru) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}
