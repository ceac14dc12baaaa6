package wireproto

import (
	"context"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// TestDialLocal: a peer on a server in this process answers as hg's
// local peer would, for the served (not secret) changesets: heads, the
// branchmap with its closed heads in revision order, lookups, ends its server on Close, and a cancelled
// context stops a request the server has not answered.
func TestDialLocal(t *testing.T) {
	src := testenv.Generate(t, testenv.Small)
	srv, err := NewServer(src, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{}, 1)
	serve := func(ctx context.Context, in io.Reader, out, errOut io.Writer) error {
		defer func() { served <- struct{}{} }()
		return srv.ServeSSH(ctx, in, out, errOut, time.Second)
	}
	ctx := context.Background()
	p, err := DialLocal(ctx, src, serve, Options{})
	if err != nil {
		t.Fatal(err)
	}
	heads, err := p.Heads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(testenv.Hg(t, src, "log", "-r", "heads(not secret())", "-T", "{node} ")))
	if !slices.Equal(slices.Sorted(slices.Values(heads)), slices.Sorted(slices.Values(want))) {
		t.Errorf("Heads = %v, hg's %v", heads, want)
	}
	bm, err := p.Branchmap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range strings.Fields(string(testenv.Hg(t, src, "branches", "-c", "-T", "{branch} "))) {
		want := strings.Fields(string(testenv.Hg(t, src, "log", "-r", "sort(heads(branch('literal:"+b+"') and not secret()), rev)", "-T", "{node} ")))
		if !reflect.DeepEqual(bm[b], want) {
			t.Errorf("branchmap[%s] = %v, hg's heads in revision order %v", b, bm[b], want)
		}
	}
	tip, err := p.Lookup(ctx, "tip")
	if want := strings.TrimSpace(string(testenv.Hg(t, src, "log", "-r", "last(not secret())", "-T", "{node}"))); err != nil || tip != want {
		t.Errorf("Lookup(tip) = %s, %v; want %s", tip, err, want)
	}
	if _, err := p.Lookup(ctx, "no-such-rev"); !errors.Is(err, ErrLookup) {
		t.Errorf("Lookup of an unknown revision: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the local server is still running after Close")
	}

	// A server that stops answering: the request's context ends the
	// wait, and the server with it.
	var stall atomic.Bool
	stalled := func(ctx context.Context, in io.Reader, out, errOut io.Writer) error {
		defer func() { served <- struct{}{} }()
		w := writerFunc(func(b []byte) (int, error) {
			if stall.Load() {
				<-ctx.Done()
				return 0, ctx.Err()
			}
			return out.Write(b)
		})
		return srv.ServeSSH(ctx, in, w, errOut, time.Second)
	}
	p, err = DialLocal(ctx, src, stalled, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stall.Store(true)
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := p.Heads(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Heads from a stalled server: %v", err)
	}
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled server still runs after its request was cancelled")
	}
	p.Close()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
