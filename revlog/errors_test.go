package revlog

import (
	"errors"
	"io"
	"testing"
)

func TestCorruptError(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	e := &CorruptError{File: "data/a.i", Rev: 3, Offset: 128, Err: cause}
	if e.Error() != "corrupted revlog data/a.i rev 3 at offset 128: unexpected EOF" {
		t.Errorf("message %q", e.Error())
	}
	if !errors.Is(e, ErrCorrupt) || !errors.Is(e, io.ErrUnexpectedEOF) || errors.Is(e, ErrUnsupported) {
		t.Error("errors.Is chain")
	}
	e = &CorruptError{File: "x.i", Rev: -1, Offset: -1, Err: cause}
	if e.Error() != "corrupted revlog x.i: unexpected EOF" {
		t.Errorf("message without rev/offset %q", e.Error())
	}
}
