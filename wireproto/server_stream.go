package wireproto

// stream_out and getbundle: the stream clone itself.
//
// Snapshot consistency: like hg (streamclone.generatev1/_v2_walk), the
// list of files and their sizes is taken under the store lock and the
// data is streamed after releasing it; revlogs are append-only, so a
// file grown meanwhile is cut at its recorded size and stays consistent.
// stream_out takes the snapshot (streamclone.PrepareV1) and releases the
// lock before sending anything. getbundle's streamclone.WriteStream2Part
// lists the files before writing anything, so the lock is released on
// the first write that leaves the generator (unlockOnWrite), after at
// most one buffer (64 KiB) of file data.
//
// Within one server, requests take the lock one at a time (snapMu): they
// would otherwise poll the lock file against each other.

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/streamclone"
)

// Messages hg's server sends (keep in sync with mercurial/bundle2.py
// addpartbundlestream2 and mercurial/exchange.py).
const (
	msgNarrowStream = "server does not support narrow stream clones"
	msgNoBookmarks  = "no common bookmarks exchange method"
	msgNoPhases     = "no common phases exchange method"
)

// streamWriteBuffer is the buffer between the generators and the socket:
// large writes keep syscalls and chunked-encoding frames few.
const streamWriteBuffer = 256 << 10

// lockForSnapshot takes the store lock. A store this process may not
// write (a read-only checkout) cannot be locked by anyone else either, and
// is streamed unlocked, where hg would fail.
func (s *Server) lockForSnapshot(ctx context.Context, v *view) (unlock func(), err error) {
	unlock, err = store.Lock(ctx, v.r.Store.Dir, store.LockOptions{Timeout: s.cfg.LockTimeout, Poll: lockPollInterval})
	if err != nil && (errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		s.logError("%s: streaming without the repository lock: %v", s.root, err)
		return func() {}, nil
	}
	return unlock, err
}

// lockPollInterval is how often a held lock is retried. hg sleeps a
// second between tries; a server holds the lock for milliseconds, so
// waiters poll faster.
const lockPollInterval = 20 * time.Millisecond

// unlockOnWrite releases the snapshot lock at the first write through it.
type unlockOnWrite struct {
	w    io.Writer
	once sync.Once
	done func()
}

func (u *unlockOnWrite) Write(p []byte) (int, error) {
	u.once.Do(u.done)
	return u.w.Write(p)
}

func (u *unlockOnWrite) release() { u.once.Do(u.done) }

// snapshotWriter takes snapMu and the repository lock, and returns a
// writer that gives both up at its first write (or at release).
func (s *Server) snapshotWriter(ctx context.Context, v *view, w io.Writer) (*unlockOnWrite, error) {
	s.snapMu.Lock()
	unlock, err := s.lockForSnapshot(ctx, v)
	if err != nil {
		s.snapMu.Unlock()
		return nil, err
	}
	return &unlockOnWrite{w: w, done: func() {
		unlock()
		s.snapMu.Unlock()
	}}, nil
}

// abortResponse cuts the connection: a stream that failed half-way must
// not look complete to the client.
func abortResponse() { panic(http.ErrAbortHandler) }

// streamTurn waits for a turn to send a stream (ServerConfig.MaxStreams)
// and returns its release, or the context's error if the client left
// first.
func (s *Server) streamTurn(ctx context.Context) (release func(), err error) {
	if s.turns == nil {
		return func() {}, nil
	}
	if s.cfg.TurnDir != "" {
		release, shared, err := s.sharedTurn(ctx)
		if shared {
			return release, err
		}
	}
	select {
	case s.turns <- struct{}{}:
		return func() { <-s.turns }, nil
	default:
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case s.turns <- struct{}{}:
		return func() { <-s.turns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sharedTurn takes one of the MaxStreams turn files of TurnDir, polling
// while all are held, until ctx ends. shared is false when the directory
// cannot be used (logged): the caller falls back to its own turns.
func (s *Server) sharedTurn(ctx context.Context) (release func(), shared bool, err error) {
	if err := os.MkdirAll(s.cfg.TurnDir, 0o777); err != nil {
		s.turnDirError(err)
		return nil, false, nil
	}
	waiting := false
	defer func() {
		if waiting {
			s.waiting.Add(-1)
		}
	}()
	for {
		for i := range s.cfg.MaxStreams {
			f, ok, err := tryTurnFile(s.cfg.TurnDir, i)
			if err != nil {
				s.turnDirError(err)
				return nil, false, nil
			}
			if ok {
				s.turns <- struct{}{} // counted in Streams; never blocks: held files bound it
				return func() {
					<-s.turns
					f.Close()
				}, true, nil
			}
		}
		if !waiting {
			waiting = true
			s.waiting.Add(1)
		}
		select {
		case <-ctx.Done():
			return nil, true, ctx.Err()
		case <-time.After(turnPollInterval):
		}
	}
}

// turnDirError logs why TurnDir cannot be used, unless it is only that
// this process may not write there (a read-only repository), which is
// not news for every stream.
func (s *Server) turnDirError(err error) {
	if !errors.Is(err, os.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		s.logError("stream turns: %v", err)
	}
}

// turnPollInterval is how often a stream waiting for a turn shared with
// other processes tries again.
const turnPollInterval = 100 * time.Millisecond

// Streams returns how many streams are being sent and how many wait
// for their turn.
func (s *Server) Streams() (sending, waiting int) {
	return len(s.turns), int(s.waiting.Load())
}

// streamOut is the stream_out command (streamclone.generatev1wireproto):
// "1\n" when streaming is not allowed, "2\n" when the lock cannot be
// taken, else "0\n" and the v1 stream. start is called once, when the
// reply and its length are known, and returns where to write it. An
// error before start means nothing was sent; after it, the reply is cut
// short and the transport must not let it look complete.
func (s *Server) streamOut(ctx context.Context, start func(length int64) (io.Writer, error)) error {
	release, err := s.streamTurn(ctx)
	if err != nil {
		return err // the client is gone: nobody to answer
	}
	defer release()
	v, err := s.open()
	if err != nil {
		return err
	}
	defer v.close()
	reply := func(msg string) error {
		w, err := start(int64(len(msg)))
		if err == nil {
			_, err = io.WriteString(w, msg)
		}
		return err
	}
	if ok, err := s.allowStream(v); err != nil {
		return err
	} else if !ok {
		return reply("1\n")
	}
	uw, err := s.snapshotWriter(ctx, v, nil)
	if err != nil {
		s.logError("stream_out: %v", err)
		return reply("2\n")
	}
	stream, err := streamclone.PrepareV1(v.r.Store)
	uw.release()
	if err != nil {
		return err
	}
	w, err := start(stream.Len())
	if err != nil {
		return err
	}
	return stream.Write(ctx, w)
}

// httpStreamOut answers stream_out over HTTP.
func (s *Server) httpStreamOut(ctx context.Context, w *logRecorder) {
	var bw *streamBuffer
	err := s.streamOut(ctx, func(length int64) (io.Writer, error) {
		// The length is known once the snapshot is taken: with a
		// Content-Length instead of chunked encoding, each write is one
		// system call and large files go out with sendfile (see
		// streamBuffer).
		w.Header().Set("Content-Type", mediaTypeV1)
		w.Header().Set("Content-Length", strconv.FormatInt(length, 10))
		w.WriteHeaderStatus(http.StatusOK, statusOK)
		w.limitWrites(s.cfg.WriteTimeout)
		bw = &streamBuffer{Writer: bufio.NewWriterSize(w, streamWriteBuffer), dst: w}
		return bw, nil
	})
	if err == nil && bw != nil {
		err = bw.Flush()
	}
	s.httpStreamEnd(ctx, w, "stream_out", bw != nil, err)
}

// streamBuffer buffers small writes; ReadFrom (a large file) flushes and
// hands the reader to the response, whose ReadFrom sends a file with
// sendfile(2) when the body is not chunked. bufio.Writer's own ReadFrom
// would first fill its buffer from the reader.
type streamBuffer struct {
	*bufio.Writer
	dst io.Writer
}

func (b *streamBuffer) ReadFrom(r io.Reader) (int64, error) {
	if err := b.Flush(); err != nil {
		return 0, err
	}
	if rf, ok := b.dst.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(b.Writer, r)
}

// abortError is an error:abort part's content.
type abortError struct{ msg, hint string }

func (e *abortError) Error() string { return e.msg }

// refusal is the error:abort part of a stream hg refuses to generate.
func refusal(r *streamclone.Refusal) *abortError { return &abortError{r.Msg, r.Hint} }

// bundlePlan is a getbundle reply decided before anything is sent.
type bundlePlan struct {
	stream    bool
	streamOpt streamclone.GenerateOptions
	bookmarks []byte            // bookmarks part payload (nil: no part)
	listkeys  []string          // namespaces, in request order
	keys      map[string][]byte // namespace -> listkeys payload
	phases    []byte            // phase-heads payload (nil: no part)
	// The changegroup part (out nil: no part) and its version ("version"
	// parameter only when cgParam).
	out       *outgoing
	cgVersion string
	cgParam   bool
	obs       []byte // obsmarkers payload (nil: no part)
}

// getbundle answers a bundle2 getbundle (exchange.getbundlechunks with
// the parts a read-only stream server can produce). start is called
// once, when the reply is decided, with whether it prefers no
// compression (a stream, or an error), and returns where the bundle
// goes; getbundle closes it. Errors before start are ErrBadRequest, an
// *oobError (a bundle10 request's abort), or the server's own;
// after start, the bundle is cut short (its own error:abort part carries
// what the client should print).
func (s *Server) getbundle(ctx context.Context, args map[string]string, start func(preferUncompressed bool) (io.WriteCloser, error)) error {
	g, err := decodeGetbundleArgs(args)
	if err != nil {
		return err
	}
	if len(g.unknown) > 0 {
		sort.Strings(g.unknown)
		s.logError("getbundle: ignoring unknown arguments %v", g.unknown)
	}
	is2, b2caps := g.bundle2()
	if !is2 {
		// A bundle10 reply is a bare changegroup (wireprotov1server.getbundle
		// forwards aborts as an ooberror over HTTP).
		return s.getbundle10(ctx, g, start)
	}
	if g.flag("stream", false) {
		release, err := s.streamTurn(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	v, err := s.open()
	if err != nil {
		return err
	}
	defer v.close()
	plan, err := s.planBundle(v, g, b2caps)
	var abort *abortError
	if errors.As(err, &abort) {
		return s.sendAbort(start, abort)
	}
	if err != nil {
		return err
	}
	var uw *unlockOnWrite
	if plan.stream {
		// Take the lock before answering, so a lock timeout can still be
		// reported as an error part.
		uw, err = s.snapshotWriter(ctx, v, nil)
		if err != nil {
			return s.sendAbort(start, &abortError{msg: err.Error()})
		}
	}
	out, err := start(plan.stream)
	if err == nil {
		var dst io.Writer = out
		if uw != nil {
			uw.w = out
			dst = uw
		}
		err = s.writeBundle(ctx, v, dst, plan)
		if uw != nil {
			uw.release()
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	} else if uw != nil {
		uw.release()
	}
	return err
}

// httpGetbundle answers getbundle over HTTP, compressed as the client
// asked (streamResponse).
func (s *Server) httpGetbundle(ctx context.Context, w *logRecorder, args map[string]string, pc protoCaps) {
	started := false
	err := s.getbundle(ctx, args, func(preferUncompressed bool) (io.WriteCloser, error) {
		started = true
		return s.streamResponse(w, pc, preferUncompressed)
	})
	s.httpStreamEnd(ctx, w, "getbundle", started, err)
}

// sendAbort answers with a bundle holding only an error:abort part, as
// wireprotov1server.getbundle does for an Abort.
func (s *Server) sendAbort(start func(preferUncompressed bool) (io.WriteCloser, error), a *abortError) error {
	out, err := start(true)
	if err != nil {
		return err
	}
	bw, err := bundle2.NewWriter(out)
	if err == nil {
		var adv []bundle2.Param
		if a.hint != "" {
			adv = append(adv, bundle2.Param{Name: "hint", Value: a.hint})
		}
		err = bw.WritePart("error:abort", true, []bundle2.Param{{Name: "message", Value: a.msg}}, adv, nil)
		if err == nil {
			err = bw.Close()
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Server) planBundle(v *view, g *getbundleArgs, b2caps Bundle2Caps) (*bundlePlan, error) {
	plan := &bundlePlan{}
	if g.flag("stream", false) {
		if ok, err := s.allowStream(v); err != nil {
			return nil, err
		} else if !ok {
			return nil, refusal(streamclone.ErrNotAllowed)
		}
		if len(g.includepats) > 0 || len(g.excludepats) > 0 {
			return nil, &abortError{msg: msgNarrowStream}
		}
		plan.stream = true
		plan.streamOpt.Publishing = s.cfg.Publishing
		var err error
		plan.streamOpt.ObsMarkers, err = streamclone.StreamObsMarkers(v.r.Store, b2caps["obsmarkers"])
		var r *streamclone.Refusal
		if errors.As(err, &r) {
			return nil, refusal(r)
		}
		if err != nil {
			return nil, err
		}
	}
	out, heads, err := v.computeOutgoing(g, g.flag("cg", true))
	if err != nil {
		return nil, err
	}
	if g.flag("cg", true) && len(b2caps) > 0 {
		// The version is checked first, as hg does, even when nothing
		// is missing.
		if plan.cgVersion, plan.cgParam, err = s.cgVersion(b2caps); err != nil {
			return nil, err
		}
		if out.n > 0 {
			plan.out = out
		}
	}
	if g.flag("bookmarks", false) {
		if !b2caps.Has("bookmarks") {
			return nil, &abortError{msg: msgNoBookmarks}
		}
		marks, err := v.bookmarks()
		if err != nil {
			return nil, err
		}
		bin := map[string][20]byte{}
		for k, h := range marks {
			bin[k] = rawNode(h)
		}
		if plan.bookmarks, err = bundle2.EncodeBookmarks(bin, nil); err != nil {
			return nil, err
		}
		if len(plan.bookmarks) == 0 {
			plan.bookmarks = nil
		}
	}
	plan.keys = map[string][]byte{}
	for _, ns := range g.listkeys {
		keys, err := s.listKeys(v, ns)
		if err != nil {
			return nil, err
		}
		plan.listkeys = append(plan.listkeys, ns)
		plan.keys[ns] = bundle2.EncodeKeys(keys)
	}
	if g.flag("obsmarkers", false) {
		if plan.obs, err = v.obsMarkersPart(heads, b2caps); err != nil {
			return nil, err
		}
	}
	if g.flag("phases", false) {
		if !b2caps.HasValue("phases", "heads") {
			return nil, &abortError{msg: msgNoPhases}
		}
		plan.phases = s.phaseHeads(v, heads)
	}
	return plan, nil
}

// allPhases is phases.allphases (keep in sync with mercurial/phases.py).
var allPhases = []repo.Phase{repo.Public, repo.Draft, repo.Secret, repo.Archived, repo.Internal}

// phaseHeads is exchange._getbundlephasespart's payload: heads grouped by
// phase, plus the public heads below draft heads, encoded as
// phases.binaryencode (int32 phase + 20-byte node, per phase in order,
// nodes sorted).
func (s *Server) phaseHeads(v *view, heads []int) []byte {
	byPhase := map[repo.Phase][]int{}
	if s.cfg.Publishing {
		byPhase[repo.Public] = heads
	} else {
		for _, h := range heads {
			p := v.r.Phase(h)
			byPhase[p] = append(byPhase[p], h)
		}
		if drafts := byPhase[repo.Draft]; len(drafts) > 0 {
			// heads(only(draftheads, publicheads) and public())
			inPub := v.ancestors(byPhase[repo.Public])
			inDraft := v.ancestors(drafts)
			set := make([]bool, v.n)
			for rev := 0; rev < v.n; rev++ {
				set[rev] = inDraft[rev] && !inPub[rev] && v.r.Phase(rev) == repo.Public
			}
			hasChild := make([]bool, v.n)
			for rev := 0; rev < v.n; rev++ {
				if set[rev] {
					p1, p2 := v.parents(rev)
					for _, p := range []int{p1, p2} {
						if p >= 0 && set[p] {
							hasChild[p] = true
						}
					}
				}
			}
			for rev := 0; rev < v.n; rev++ {
				if set[rev] && !hasChild[rev] && !containsInt(byPhase[repo.Public], rev) {
					byPhase[repo.Public] = append(byPhase[repo.Public], rev)
				}
			}
		}
	}
	var out []byte
	for _, p := range allPhases {
		nodes := hexNodes(v, byPhase[p])
		sort.Strings(nodes)
		for _, n := range nodes {
			out = binary.BigEndian.AppendUint32(out, uint32(p))
			raw := rawNode(n)
			out = append(out, raw[:]...)
		}
	}
	return out
}

func containsInt(list []int, x int) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// writeBundle writes the planned parts, in exchange.py's part order
// (stream2, changegroup, bookmarks, listkeys, obsmarkers, phases).
func (s *Server) writeBundle(ctx context.Context, v *view, w io.Writer, plan *bundlePlan) error {
	bw, err := bundle2.NewWriter(w)
	if err != nil {
		return err
	}
	if plan.stream {
		if err := streamclone.WriteStream2Part(ctx, bw, v.r.Store, plan.streamOpt); err != nil {
			return err
		}
	}
	if plan.out != nil {
		if err := s.writeChangegroupPart(ctx, v, bw, plan); err != nil {
			return err
		}
	}
	if plan.bookmarks != nil {
		if err := bw.WritePart("bookmarks", true, nil, nil, plan.bookmarks); err != nil {
			return err
		}
	}
	for _, ns := range plan.listkeys {
		if err := bw.WritePart("listkeys", true, []bundle2.Param{{Name: "namespace", Value: ns}}, nil, plan.keys[ns]); err != nil {
			return err
		}
	}
	if plan.obs != nil {
		if err := bw.WritePart("obsmarkers", true, nil, nil, plan.obs); err != nil {
			return err
		}
	}
	if plan.phases != nil {
		if err := bw.WritePart("phase-heads", true, nil, nil, plan.phases); err != nil {
			return err
		}
	}
	return bw.Close()
}
