//go:build linux

package mount

import "testing"

// A slicePool gives back an array put into it, empty, when it is big
// enough; a fresh one otherwise, and always with SetPooling(false).
func TestSlicePool(t *testing.T) {
	var p slicePool[int]
	b := p.get(100)
	if len(b) != 0 || cap(b) < 100 {
		t.Fatalf("get(100): len %d cap %d", len(b), cap(b))
	}
	b = append(b, 1, 2, 3)
	p.put(b)
	// A sync.Pool may drop what it holds at any time (a collection):
	// a fresh slice is a correct answer too, so try a few times.
	reused := false
	for range 10 {
		c := p.get(50)
		if len(c) != 0 || cap(c) < 50 {
			t.Fatalf("get(50): len %d cap %d", len(c), cap(c))
		}
		if cap(c) >= 3 && &c[:1][0] == &b[0] {
			reused = true
			break
		}
		p.put(b)
	}
	if !reused {
		t.Errorf("the array put back was never reused")
	}
	p.put(b)
	if c := p.get(1000); cap(c) < 1000 || &c[:1][0] == &b[0] {
		t.Errorf("get(1000) gave the 100-element array back")
	}
	SetPooling(false)
	defer SetPooling(true)
	p.put(b)
	if c := p.get(1); &c[:1][0] == &b[0] {
		t.Errorf("pooling off, get reused an array")
	}
}
