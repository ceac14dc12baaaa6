package revlog

// textCache keeps the most recently reconstructed full texts so that
// reading revisions in order (log, verify, cat of successive revisions)
// applies one delta per revision instead of a whole chain. hg keeps just
// the last text (_revisioncache); a few more serve branchy histories where
// the delta parent is not the previous revision.
type textCache struct {
	entries  []cachedText // most recently used last
	maxItems int
	maxBytes int
	// minItems, if set, is how many of the most recent texts stay
	// whatever their size: the byte bound evicts older ones only, and a
	// text larger than maxBytes is kept (alone with the minItems-1
	// before it) instead of dropped.
	minItems int
	bytes    int
	// dropped, if set, is given each text the cache lets go of, and a
	// text too large to keep (EachRevision recycles their buffers).
	dropped func([]byte)
}

type cachedText struct {
	rev  int
	text []byte
}

const (
	defaultCacheItems = 8
	defaultCacheBytes = 64 << 20
)

func (c *textCache) get(rev int) ([]byte, bool) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].rev == rev {
			e := c.entries[i]
			copy(c.entries[i:], c.entries[i+1:])
			c.entries[len(c.entries)-1] = e
			return e.text, true
		}
	}
	return nil, false
}

func (c *textCache) add(rev int, text []byte) {
	if len(text) > c.maxBytes && c.minItems == 0 {
		c.drop(text)
		return
	}
	for i, e := range c.entries {
		if e.rev == rev {
			c.bytes -= len(e.text)
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			c.drop(e.text)
			break
		}
	}
	for len(c.entries) > 0 && (len(c.entries) >= c.maxItems || c.bytes+len(text) > c.maxBytes && len(c.entries) >= c.minItems) {
		c.bytes -= len(c.entries[0].text)
		c.drop(c.entries[0].text)
		c.entries[0] = cachedText{}
		c.entries = c.entries[1:]
	}
	c.entries = append(c.entries, cachedText{rev: rev, text: text})
	c.bytes += len(text)
}

func (c *textCache) drop(text []byte) {
	if c.dropped != nil {
		c.dropped(text)
	}
}

func (c *textCache) clear() {
	c.entries = nil
	c.bytes = 0
}
