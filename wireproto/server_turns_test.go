package wireproto

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStreamTurns: with one turn, a stream held up by a foreign lock
// keeps a second one (stream_out and getbundle share the turns) waiting;
// a waiting client that leaves takes no turn; once the lock goes, both
// are sent in full.
func TestStreamTurns(t *testing.T) {
	src := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	lock := filepath.Join(src, ".hg", "store", "lock")
	if err := os.Symlink("otherhost:1", lock); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.MaxStreams = 1
	cfg.LockTimeout = time.Minute
	srv, err := NewServer(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := serveOn(t, srv)

	type reply struct {
		body []byte
		err  error
	}
	get := func(ctx context.Context, cmd string, args map[string]string, proto string) <-chan reply {
		ch := make(chan reply, 1)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"?cmd="+cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range splitHeaderValue(formEncode(args), "X-HgArg", 1024) {
			req.Header.Set(fmt.Sprintf("X-HgArg-%d", i+1), v)
		}
		if proto != "" {
			req.Header.Set("X-HgProto-1", proto)
		}
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				ch <- reply{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			ch <- reply{b, err}
		}()
		return ch
	}
	streams := func(sending, waiting int) func() bool {
		return func() bool { s, w := srv.Streams(); return s == sending && w == waiting }
	}

	first := get(context.Background(), "stream_out", nil, "")
	waitFor(t, "the first stream to take the turn", streams(1, 0))
	gbArgs := map[string]string{"bundlecaps": clientBundle2Caps(), "cg": "0", "stream": "1", "common": NullHex}
	second := get(context.Background(), "getbundle", gbArgs, "0.1 0.2 comp=none")
	waitFor(t, "the second stream to wait", streams(1, 1))
	ctx, cancel := context.WithCancel(context.Background())
	third := get(ctx, "stream_out", nil, "")
	waitFor(t, "the third stream to wait", streams(1, 2))
	cancel()
	if r := <-third; !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled request: %v", r.err)
	}
	waitFor(t, "the cancelled stream to leave the queue", streams(1, 1))

	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan reply{"stream_out": first, "getbundle": second} {
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatalf("%s: %v", name, r.err)
			}
			if name == "stream_out" && !bytes.HasPrefix(r.body, []byte("0\n")) {
				t.Errorf("stream_out: %q", truncate(string(r.body), 40))
			}
			if name == "getbundle" {
				// Media type 0.2: a length-prefixed compression name first.
				if len(r.body) == 0 || !bytes.HasPrefix(r.body[1:], []byte("none")) {
					t.Fatalf("getbundle: %q", truncate(string(r.body), 40))
				}
				if p := firstPart(t, r.body[1+int(r.body[0]):]); p.Type != "stream2" {
					t.Errorf("getbundle: first part %s", p.Type)
				}
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s not answered a minute after the lock went", name)
		}
	}
	waitFor(t, "every turn to be given back", streams(0, 0))
}
