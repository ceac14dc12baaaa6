package uring

import (
	"errors"
	"testing"
)

// TestSetEnabled switches io_uring off: New and NewFileReader then fail
// as where the kernel refuses it (ErrUnavailable, which every caller
// answers with system calls), and work again once it is back on.
func TestSetEnabled(t *testing.T) {
	if !Enabled() {
		t.Fatal("io_uring is off by default")
	}
	if was := SetEnabled(false); !was {
		t.Error("SetEnabled(false) reported it was off")
	}
	defer SetEnabled(true)
	if Enabled() {
		t.Error("Enabled() after SetEnabled(false)")
	}
	if r, err := New(8); !errors.Is(err, ErrUnavailable) {
		if r != nil {
			r.Close()
		}
		t.Errorf("New with io_uring off: %v, want ErrUnavailable", err)
	}
	if fr, err := NewFileReader(4, 4096); !errors.Is(err, ErrUnavailable) {
		if fr != nil {
			fr.Close()
		}
		t.Errorf("NewFileReader with io_uring off: %v, want ErrUnavailable", err)
	}
	if was := SetEnabled(true); was {
		t.Error("SetEnabled(true) reported it was on")
	}
	newRing(t, 8) // back on: a ring, unless the kernel has none (skip)
}
