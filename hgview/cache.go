package hgview

import (
	"container/list"
	"sync"
)

// lru is a byte-bounded least-recently-used cache of reconstructed texts
// and parsed manifests. A value larger than the whole bound is not kept.
type lru struct {
	mu    sync.Mutex
	max   int64
	size  int64
	order *list.List // front = most recently used
	items map[string]*list.Element
}

type lruItem struct {
	key   string
	value any
	size  int64
}

func newLRU(max int64) *lru {
	return &lru{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem).value, true
}

func (c *lru) add(key string, value any, size int64) {
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		it := el.Value.(*lruItem)
		c.size += size - it.size
		it.value, it.size = value, size
		c.order.MoveToFront(el)
	} else {
		c.items[key] = c.order.PushFront(&lruItem{key: key, value: value, size: size})
		c.size += size
	}
	for c.size > c.max {
		el := c.order.Back()
		it := el.Value.(*lruItem)
		c.order.Remove(el)
		delete(c.items, it.key)
		c.size -= it.size
	}
}
