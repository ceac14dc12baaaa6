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
//	error:*                 the apply fails with a *RemoteError
//	anything else           mandatory: refused; advisory: skipped

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// maxKeysPayload bounds the bookmarks and listkeys payloads held in memory.
const maxKeysPayload = 64 << 20

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
		case bundle2Magic:
			return a.applyBundle2(br)
		}
		if strings.HasPrefix(string(magic), "HG10") {
			return fmt.Errorf("%w: changegroup bundle %q", ErrNotStream, magic)
		}
		return corruptf("unknown bundle magic %q", magic)
	})
}

func (a *applier) applyBundle2(r io.Reader) error {
	b2, err := NewBundle2Reader(r)
	if err != nil {
		return err
	}
	defer b2.Close()
	b2.Interrupt = a.interruptPart
	var (
		streamed    bool
		listkeysBMs map[string]string
	)
	for {
		p, err := b2.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := errorPart(p); err != nil {
			return err
		}
		known, ok := knownPartParams[p.Type]
		if !ok {
			if p.Mandatory {
				return fmt.Errorf("%w: missing support for %s", ErrUnsupportedPart, p.Type)
			}
			continue
		}
		if unknown := unknownParams(p, known); unknown != "" {
			if p.Mandatory {
				return fmt.Errorf("%w: missing support for %s - %s", ErrUnsupportedPart, p.Type, unknown)
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
			bms, err := decodeBookmarksPart(p)
			if err != nil {
				return err
			}
			a.bookmarks = bms
		case "listkeys":
			if ns, _ := p.Param("namespace"); ns == "bookmarks" {
				if listkeysBMs, err = decodeListkeysBookmarks(p); err != nil {
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

// unknownParams returns the part's mandatory parameters its handler does
// not know, comma-separated and sorted as hg reports them.
func unknownParams(p *Part, known []string) string {
	var out []string
	for _, kv := range p.MandatoryParams {
		ok := false
		for _, k := range known {
			ok = ok || k == kv.Name
		}
		if !ok {
			out = append(out, kv.Name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// interruptPart handles an out-of-band part (see Bundle2Reader.Interrupt).
func (a *applier) interruptPart(p *Part) error {
	if err := errorPart(p); err != nil {
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

func (a *applier) output(p *Part) error {
	data, err := readBounded(p, maxKeysPayload, "output part")
	if err != nil {
		return err
	}
	if a.opt.Output != nil && len(data) > 0 {
		a.opt.Output(string(data))
	}
	return nil
}

func readBounded(r io.Reader, max int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, corruptf("%s larger than %d bytes", what, max)
	}
	return data, nil
}

// phaseEntrySize is a phase-heads entry: int32 phase, node[20]
// (phases._fphasesentry, '>i20s').
const phaseEntrySize = 24

// checkPhaseHeads reads a phase-heads part through, checking its framing
// and phases as phases.binarydecode does. Keep the phases in sync with
// mercurial/phases.py allphases.
func checkPhaseHeads(p *Part) error {
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

// wdirHex is the "missing" node of the bookmarks part (wdirid).
var wdirHex = strings.Repeat("f", 40)

// checkBookmarkName refuses names that would corrupt .hg/bookmarks.
func checkBookmarkName(name string) error {
	if !store.ValidBookmarkName(name) {
		return corruptf("invalid bookmark name %q", name)
	}
	return nil
}

// decodeBookmarksPart decodes the binary bookmarks part
// (bookmarks.binarydecode: node[20] + uint16 length + name, repeated).
func decodeBookmarksPart(p *Part) (map[string]string, error) {
	data, err := readBounded(p, maxKeysPayload, "bookmarks part")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for len(data) > 0 {
		if len(data) < 22 {
			return nil, corruptf("bad bookmark stream: %d trailing bytes", len(data))
		}
		node := hex.EncodeToString(data[:20])
		n := int(binary.BigEndian.Uint16(data[20:22]))
		data = data[22:]
		if len(data) < n {
			return nil, corruptf("bad bookmark stream: name of %d bytes, %d left", n, len(data))
		}
		name := string(data[:n])
		data = data[n:]
		if err := checkBookmarkName(name); err != nil {
			return nil, err
		}
		if node == wdirHex {
			delete(out, name) // deletion marker: nothing to add in a clone
			continue
		}
		out[name] = node
	}
	return out, nil
}

// decodeListkeysBookmarks decodes a listkeys part of namespace bookmarks
// (pushkey.decodekeys: "key\tvalue\n" lines, value a hex node).
func decodeListkeysBookmarks(p *Part) (map[string]string, error) {
	data, err := readBounded(p, maxKeysPayload, "listkeys part")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(line, []byte("\t"))
		if !ok {
			return nil, corruptf("listkeys line %q has no tab", line)
		}
		if err := checkBookmarkName(string(k)); err != nil {
			return nil, err
		}
		if len(v) != 40 {
			return nil, corruptf("listkeys bookmark %q: bad node %q", k, v)
		}
		if _, err := hex.DecodeString(string(v)); err != nil {
			return nil, corruptf("listkeys bookmark %q: bad node %q", k, v)
		}
		out[string(k)] = strings.ToLower(string(v))
	}
	return out, nil
}
