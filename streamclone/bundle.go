package streamclone

// ApplyBundle: stream clone bundles (packed1 "HGS1", or bundle2 "HG20"
// with a stream2 part) and getbundle replies of a stream clone.
//
// The parts a stream clone carries and what is done with them, as hg 6.3's
// pull does (exchange._pullbundle2 with streaming: phases are in the
// stream, bookmarks arrive as a "bookmarks" part and, for old clients, a
// "listkeys" part of namespace bookmarks):
//
//	stream2                 applied (once)
//	bookmarks               written to .hg/bookmarks (store/bookmarks with
//	                        bookmarksinstore)
//	listkeys bookmarks      used when no bookmarks part came
//	listkeys other          ignored (phases are in the stream)
//	phase-heads             checked, not applied: hg bundle -t
//	                        'none-v2;stream=v2;phases=1' adds it after the
//	                        stream, computed from the same repository as
//	                        the stream's phaseroots, so hg's update
//	                        (phases.updatephases) finds nothing to advance;
//	                        a truncated part aborts as in hg ("bad
//	                        phase-heads stream"), and so does an unknown
//	                        phase (where hg fails with a KeyError). Known
//	                        difference, for bundles not written by hg
//	                        bundle in one go: heads the stream's changelog
//	                        lacks make hg abort (LookupError), and a head
//	                        listed in a lower phase than the stream gives
//	                        it makes hg advance it; hgfs keeps the
//	                        stream's phaseroots in both cases (checking
//	                        either needs the changelog's nodes)
//	obsmarkers, hgtagsfnodes, cache:rev-branch-cache, check:*,
//	output, replycaps, reply:*
//	                        not applied: hg never sends them with stream2
//	                        (obsstore and phaseroots travel in the stream;
//	                        caches are rebuilt); output goes to
//	                        Options.Output. Mandatory obsmarkers or
//	                        changegroup parts are refused, since dropping
//	                        them would lose data.
//	error:*                 the apply fails with a *bundle2.RemoteError
//	anything else           mandatory: refused; advisory: skipped

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/store"
)

// maxOutputPayload bounds an output part held in memory.
const maxOutputPayload = 64 << 20

// ErrNotStream: a bundle without stream clone data (a changegroup bundle,
// or a bundle2 without a stream2 part).
var ErrNotStream = errors.New("not a stream clone bundle")

// partParams lists the parameters hg's handler for each part type knows;
// a part with other mandatory parameters is "unsupported" (bundle2
// _gethandler). Keep in sync with the @parthandler declarations in
// mercurial/bundle2.py.
var knownPartParams = map[string][]string{
	"stream2":                  {"requirements", "filecount", "bytecount"},
	"bookmarks":                nil,
	"listkeys":                 {"namespace"},
	"phase-heads":              nil,
	"hgtagsfnodes":             nil,
	"cache:rev-branch-cache":   nil,
	"check:bookmarks":          nil,
	"check:heads":              nil,
	"check:updated-heads":      nil,
	"check:phases":             nil,
	"output":                   nil,
	"replycaps":                nil,
	"reply:changegroup":        {"return", "in-reply-to"},
	"reply:pushkey":            {"return", "in-reply-to"},
	"reply:obsmarkers":         {"new", "in-reply-to"},
	"error:abort":              {"message", "hint"},
	"error:unsupportedcontent": {"parttype", "params"},
	"error:pushraced":          {"message"},
	"error:pushkey":            {"namespace", "key", "new", "old", "ret", "in-reply-to"},
}

// ApplyBundle applies a packed1 bundle or a bundle2 stream holding a
// stream2 part (compressed or not) into sink. On success the sink is
// finished; on any error it is aborted. As with ApplyV1, pass a
// *bufio.Reader if the connection carries more after the bundle.
func ApplyBundle(ctx context.Context, r io.Reader, sink Sink, opt Options) (*Result, error) {
	a := newApplier(ctx, sink, opt)
	return a.run(func() error {
		br := bufferedReader(r)
		magic, err := br.Peek(4)
		if err != nil {
			return corruptf("reading bundle magic: stream too short (%d bytes)", len(magic))
		}
		switch string(magic) {
		case packed1Magic:
			return a.applyPacked1(br)
		case bundle2.Magic:
			return bundle2Error(a.applyBundle2(br))
		}
		if strings.HasPrefix(string(magic), "HG10") {
			return fmt.Errorf("%w: changegroup bundle %q", ErrNotStream, magic)
		}
		return corruptf("unknown bundle magic %q", magic)
	})
}

func (a *applier) applyBundle2(r io.Reader) error {
	b2, err := bundle2.NewReader(r)
	if err != nil {
		return err
	}
	defer b2.Close()
	b2.Interrupt = a.interruptPart
	var (
		streamed    bool
		listkeysBMs map[string][20]byte
	)
	for {
		p, err := b2.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := p.RemoteError(); err != nil {
			return err
		}
		known, ok := knownPartParams[p.Type]
		if !ok {
			if p.Mandatory {
				return fmt.Errorf("%w: missing support for %s", ErrUnsupportedPart, p.Type)
			}
			continue
		}
		if unknown := p.UnknownParams(known); len(unknown) > 0 {
			if p.Mandatory {
				return fmt.Errorf("%w: missing support for %s - %s", ErrUnsupportedPart, p.Type, strings.Join(unknown, ", "))
			}
			continue
		}
		switch p.Type {
		case "stream2":
			if streamed {
				return corruptf("second stream2 part (id %d)", p.ID)
			}
			streamed = true
			if err := a.applyStream2(p); err != nil {
				return err
			}
		case "bookmarks":
			marks, deleted, err := bundle2.DecodeBookmarks(p)
			if err != nil {
				return err
			}
			if err := checkBookmarkNames(marks, deleted); err != nil {
				return err
			}
			a.bookmarks = marks // deletions: nothing to remove in a clone
		case "listkeys":
			if ns, _ := p.Param("namespace"); ns == "bookmarks" {
				keys, err := bundle2.DecodeKeys(p)
				if err != nil {
					return err
				}
				if listkeysBMs, err = bundle2.DecodeBookmarkKeys(keys); err != nil {
					return err
				}
				if err := checkBookmarkNames(listkeysBMs, nil); err != nil {
					return err
				}
			}
		case "phase-heads":
			if err := checkPhaseHeads(p); err != nil {
				return err
			}
		case "output":
			if err := a.output(p); err != nil {
				return err
			}
		}
	}
	if !streamed {
		return fmt.Errorf("%w: bundle2 stream has no stream2 part", ErrNotStream)
	}
	if a.bookmarks == nil && listkeysBMs != nil {
		a.bookmarks = listkeysBMs
	}
	return nil
}

// interruptPart handles an out-of-band part (see bundle2.Reader.Interrupt).
func (a *applier) interruptPart(p *bundle2.Part) error {
	if err := p.RemoteError(); err != nil {
		return err
	}
	if p.Type == "output" {
		return a.output(p)
	}
	if p.Mandatory {
		return fmt.Errorf("%w: missing support for %s (in a stream interruption)", ErrUnsupportedPart, p.Type)
	}
	return p.Discard()
}

func (a *applier) output(p *bundle2.Part) error {
	data, err := io.ReadAll(io.LimitReader(p, maxOutputPayload+1))
	if err != nil {
		return err
	}
	if len(data) > maxOutputPayload {
		return corruptf("output part larger than %d bytes", maxOutputPayload)
	}
	if a.opt.Output != nil && len(data) > 0 {
		a.opt.Output(string(data))
	}
	return nil
}

// phaseEntrySize is a phase-heads entry: int32 phase, node[20]
// (phases._fphasesentry, '>i20s').
const phaseEntrySize = 24

// checkPhaseHeads reads a phase-heads part through, checking its framing
// and phases as phases.binarydecode does. Keep the phases in sync with
// mercurial/phases.py allphases.
func checkPhaseHeads(p *bundle2.Part) error {
	var entry [phaseEntrySize]byte
	for {
		n, err := io.ReadFull(p, entry[:])
		if err == io.EOF {
			return nil
		}
		if err == io.ErrUnexpectedEOF {
			return corruptf("bad phase-heads stream: %d trailing bytes", n)
		}
		if err != nil {
			return err
		}
		switch phase := int32(binary.BigEndian.Uint32(entry[:4])); phase {
		case 0, 1, 2, 32, 96: // public, draft, secret, archived, internal
		default:
			return corruptf("bad phase-heads stream: unknown phase %d", phase)
		}
	}
}

// checkBookmarkNames refuses names that would corrupt .hg/bookmarks.
func checkBookmarkNames(marks map[string][20]byte, deleted []string) error {
	for _, name := range deleted {
		if !store.ValidBookmarkName(name) {
			return corruptf("invalid bookmark name %q", name)
		}
	}
	for name := range marks {
		if !store.ValidBookmarkName(name) {
			return corruptf("invalid bookmark name %q", name)
		}
	}
	return nil
}

// bundle2Error keeps an error of the bundle2 layer (its message and
// errors.Is chain) while making it match this package's sentinel for it
// too: ErrCorrupt, ErrUnsupportedPart or ErrRemote.
func bundle2Error(err error) error {
	var sentinel error
	switch {
	case err == nil, errors.Is(err, ErrCorrupt), errors.Is(err, ErrUnsupportedPart), errors.Is(err, ErrRemote):
		return err
	case errors.Is(err, bundle2.ErrMalformed), errors.Is(err, bundle2.ErrMalformedKeys):
		sentinel = ErrCorrupt
	case errors.Is(err, bundle2.ErrUnsupported):
		sentinel = ErrUnsupportedPart
	case errors.Is(err, bundle2.ErrRemote):
		sentinel = ErrRemote
	default:
		return err
	}
	return &alsoError{err: err, sentinel: sentinel}
}

type alsoError struct{ err, sentinel error }

func (e *alsoError) Error() string   { return e.err.Error() }
func (e *alsoError) Unwrap() []error { return []error{e.err, e.sentinel} }
