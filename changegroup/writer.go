package changegroup

// Encoding changegroups: the inverse of reader.go, as cgpacker in
// mercurial/changegroup.py frames them (chunkheader, closechunk,
// _fileheader, builddeltaheader).

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Writer encodes a changegroup. Groups must come in order: Changelog,
// Manifest, then File groups; a group not started is written empty.
// Close ends the changegroup. Writer checks framing only: the names and
// nodes it is given are written as they are (tests use it to build bad
// input).
type Writer struct {
	w       *bufio.Writer
	version string
	stage   int // as Reader.stage: the segment being written
	inFile  bool
	nDeltas int
	prev    [20]byte
	err     error
	closed  bool
	// finish runs after the changegroup is written (bundle trailers).
	finish func() error
}

// NewWriter starts a changegroup of version "01", "02" or "03" on w.
func NewWriter(w io.Writer, version string) (*Writer, error) {
	switch version {
	case Version1, Version2, Version3:
	default:
		return nil, unsupportedf("changegroup version %q (supported: 01, 02, 03)", version)
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), version: version, stage: -1}, nil
}

// Version returns the changegroup version being written.
func (w *Writer) Version() string { return w.version }

// StartGroup ends the current group and starts the next one. name is the
// file path for File groups and ignored otherwise.
func (w *Writer) StartGroup(kind GroupKind, name string) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("changegroup: StartGroup after Close")
	}
	switch kind {
	case Changelog:
		if w.stage >= stageChangelog {
			return errors.New("changegroup: changelog group started twice")
		}
		w.stage = stageChangelog
	case Manifest:
		if w.stage >= stageManifest {
			return errors.New("changegroup: manifest group out of order")
		}
		w.advance(stageManifest)
	case File:
		if name == "" || len(name) > math.MaxInt32-4 {
			return fmt.Errorf("changegroup: invalid file name %q", name)
		}
		w.advance(stageFiles)
		if w.inFile {
			w.closeChunk()
		}
		w.chunkHeader(len(name))
		w.w.WriteString(name)
		w.inFile = true
	default:
		return fmt.Errorf("changegroup: unknown group kind %v", kind)
	}
	w.nDeltas = 0
	return w.err
}

// advance ends segments until stage to is the current one.
func (w *Writer) advance(to int) {
	for w.stage < to {
		switch w.stage {
		case stageChangelog, stageManifest:
			w.closeChunk()
		}
		w.stage++
		if w.stage == stageTrees {
			if w.version == Version3 {
				w.closeChunk() // no tree manifests
			}
			w.stage++
		}
	}
}

// WriteDelta appends a revision to the current group. In cg1 the base is
// implied, so d.Base must be the previous node of the group (P1 for the
// first delta); anything else is refused with ErrUnsupported. Flags need
// cg3.
func (w *Writer) WriteDelta(d *Delta) error {
	if w.err != nil {
		return w.err
	}
	if w.closed || w.stage < stageChangelog || w.stage == stageFiles && !w.inFile {
		return errors.New("changegroup: WriteDelta outside a group")
	}
	var h []byte
	switch w.version {
	case Version1:
		want := w.prev
		if w.nDeltas == 0 {
			want = d.P1
		}
		if d.Base != want {
			return unsupportedf("cg1 cannot carry a delta against %x (implied base %x)", d.Base, want)
		}
		if d.Flags != 0 {
			return unsupportedf("cg1 cannot carry revision flags")
		}
		h = make([]byte, 0, headerSizeV1)
		h = append(append(append(append(h, d.Node[:]...), d.P1[:]...), d.P2[:]...), d.LinkNode[:]...)
	default:
		if d.Flags != 0 && w.version != Version3 {
			return unsupportedf("cg%s cannot carry revision flags", w.version[1:])
		}
		h = make([]byte, 0, headerSizeV3)
		h = append(append(append(append(append(h, d.Node[:]...), d.P1[:]...), d.P2[:]...), d.Base[:]...), d.LinkNode[:]...)
		if w.version == Version3 {
			h = binary.BigEndian.AppendUint16(h, d.Flags)
		}
	}
	if int64(len(h))+int64(len(d.Data)) > math.MaxInt32-4 {
		return fmt.Errorf("changegroup: delta of %d bytes does not fit a chunk", len(d.Data))
	}
	w.chunkHeader(len(h) + len(d.Data))
	w.w.Write(h)
	w.w.Write(d.Data)
	w.prev = d.Node
	w.nDeltas++
	return w.err
}

// Close ends the changegroup (writing any group not started as empty) and
// flushes. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	w.advance(stageFiles)
	if w.inFile {
		w.closeChunk()
	}
	w.closeChunk() // end of the file list
	if err := w.w.Flush(); err != nil && w.err == nil {
		w.err = err
	}
	if w.err == nil && w.finish != nil {
		w.err = w.finish()
	}
	return w.err
}

func (w *Writer) chunkHeader(n int) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(n+4))
	if _, err := w.w.Write(b[:]); err != nil && w.err == nil {
		w.err = err
	}
}

func (w *Writer) closeChunk() {
	var b [4]byte
	if _, err := w.w.Write(b[:]); err != nil && w.err == nil {
		w.err = err
	}
}

// FullDelta returns a delta that turns the empty text into text (what
// mdiff.trivialdiffheader prefixes): a delta against the null revision.
func FullDelta(text []byte) []byte {
	return ReplaceDelta(0, text)
}

// ReplaceDelta returns a delta replacing a whole base text of baseLen
// bytes by text (mdiff.replacediffheader).
func ReplaceDelta(baseLen int, text []byte) []byte {
	d := make([]byte, 12, 12+len(text))
	binary.BigEndian.PutUint32(d[0:], 0)
	binary.BigEndian.PutUint32(d[4:], uint32(baseLen))
	binary.BigEndian.PutUint32(d[8:], uint32(len(text)))
	return append(d, text...)
}
