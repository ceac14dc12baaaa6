package exchange

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/wireproto"
)

// StreamKind is the stream format a clone takes from a server.
type StreamKind int

const (
	// NoStream: the server offers no stream this client can apply; the
	// clone pulls changegroups instead.
	NoStream StreamKind = iota
	// StreamV1 is the stream_out command (streamclone.py
	// maybeperformlegacystreamclone): store files only.
	StreamV1
	// StreamV2 is a bundle2 getbundle with stream=1 (stream2 part, and
	// the binary bookmarks part where the server has it).
	StreamV2
)

// StreamPlan is what a server's capabilities allow a stream clone to do,
// decided as streamclone.canperformstreamclone does.
type StreamPlan struct {
	Kind StreamKind
	// Requirements of a v1 stream: the server's streamreqs, or nil where
	// it says "stream" alone (revlogv1).
	Requirements []string
	// Disabled: the server streams nothing (server.uncompressed=false).
	Disabled bool
	// Missing lists, sorted, the stream requirements this client lacks
	// (hg 7's delta-info-revlog against hgfs, say).
	Missing []string
}

// PlanStream decides whether and how to stream from a server with caps.
// A Kind of NoStream comes with the reason (Disabled or Missing); the
// caller decides whether to fall back to a pull (hg warns and does) or
// to refuse (a mount is filled from a stream only).
func PlanStream(caps wireproto.Caps) (StreamPlan, error) {
	b2, err := caps.Bundle2()
	if err != nil {
		return StreamPlan{}, err
	}
	var p StreamPlan
	if !caps.Has("stream") {
		v, _ := caps.Get("streamreqs")
		if v == "" {
			p.Disabled = true
			return p, nil
		}
		p.Requirements = strings.Split(v, ",")
	}
	if p.Missing = streamclone.MissingRequirements(p.Requirements); len(p.Missing) > 0 {
		return p, nil
	}
	p.Kind = StreamV1
	if b2.HasValue("stream", "v2") {
		p.Kind = StreamV2
	}
	return p, nil
}

// Stream is an open stream clone reply.
type Stream struct {
	Body io.ReadCloser
	// Bookmarks of a v1 stream, listed (listkeys) before the stream was
	// asked for, so each points at a changeset the stream holds; hg
	// lists them after the stream. Nil for v2, whose bundle carries
	// them.
	Bookmarks map[string]string
}

// OpenStream asks peer for the stream p plans (StreamV1 or StreamV2).
// announce, if not nil, runs just before the stream itself is asked for,
// after the requests that precede it (v1's listkeys), where hg prints
// "streaming all changes".
func OpenStream(ctx context.Context, peer wireproto.Peer, p StreamPlan, announce func()) (*Stream, error) {
	if announce == nil {
		announce = func() {}
	}
	switch p.Kind {
	case StreamV2:
		b2, err := peer.Capabilities().Bundle2()
		if err != nil {
			return nil, err
		}
		// No heads request first: the stream is the whole store
		// whatever heads say (see StreamCloneArgs).
		announce()
		body, err := peer.GetBundle(ctx, wireproto.StreamCloneArgs(b2))
		if err != nil {
			return nil, err
		}
		return &Stream{Body: body}, nil
	case StreamV1:
		books, err := peer.ListKeys(ctx, "bookmarks")
		if err != nil {
			return nil, err
		}
		announce()
		body, err := peer.StreamOut(ctx)
		if err != nil {
			return nil, err
		}
		return &Stream{Body: body, Bookmarks: books}, nil
	}
	return nil, fmt.Errorf("no stream to open (plan %d)", p.Kind)
}
