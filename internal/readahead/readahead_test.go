package readahead

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestSameBytes passes streams through Readers of several shapes and
// reads them back in pieces of several sizes.
func TestSameBytes(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 100_000, 1 << 20} {
		data := randomBytes(n)
		for _, src := range []struct {
			name string
			r    func() io.Reader
		}{
			{"whole", func() io.Reader { return bytes.NewReader(data) }},
			{"one byte", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) }},
			{"half", func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) }},
			{"data with EOF", func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) }},
		} {
			for _, bufs := range []int{1, 2, 8} {
				ra := New(src.r(), 4096, bufs)
				got, err := io.ReadAll(iotest.HalfReader(ra))
				ra.Close()
				if err != nil {
					t.Fatalf("%d bytes, %s, %d buffers: %v", n, src.name, bufs, err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("%d bytes, %s, %d buffers: got %d bytes, not the same", n, src.name, bufs, len(got))
				}
			}
		}
	}
}

// TestError passes the source's error on after every byte read before it.
func TestError(t *testing.T) {
	data := randomBytes(10_000)
	boom := errors.New("connection reset")
	src := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom))
	ra := New(src, 4096, 2)
	defer ra.Close()
	got, err := io.ReadAll(ra)
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes before the error, want the %d sent", len(got), len(data))
	}
	if n, err := ra.Read(make([]byte, 10)); n != 0 || !errors.Is(err, boom) {
		t.Fatalf("read after the error: %d, %v", n, err)
	}
}

// countingReader is an endless stream counting what was taken from it.
type countingReader struct{ n atomic.Int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// TestBounded checks that a Reader whose caller does not read takes at
// most its buffers' worth from the source.
func TestBounded(t *testing.T) {
	const size, bufs = 8192, 4
	src := &countingReader{}
	ra := New(src, size, bufs)
	defer ra.Close()
	var last int64 = -1
	for i := 0; i < 200; i++ {
		time.Sleep(5 * time.Millisecond)
		n := src.n.Load()
		if n == last && n > 0 {
			break
		}
		last = n
	}
	if n := src.n.Load(); n > size*bufs {
		t.Fatalf("read %d bytes ahead, bound %d", n, size*bufs)
	}
	// Reading one buffer's worth lets exactly one more be read ahead.
	if _, err := io.ReadFull(ra, make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200 && src.n.Load() < (bufs+1)*size; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if n := src.n.Load(); n != (bufs+1)*size {
		t.Fatalf("after one buffer read, %d bytes taken, want %d", n, (bufs+1)*size)
	}
}

// blockingReader blocks until released, then reports EOF.
type blockingReader struct{ release chan struct{} }

func (b *blockingReader) Read(p []byte) (int, error) {
	<-b.release
	return 0, io.EOF
}

// TestClose checks that a Read waiting for data returns once the Reader
// is closed, and later Reads fail.
func TestClose(t *testing.T) {
	src := &blockingReader{release: make(chan struct{})}
	defer close(src.release)
	ra := New(src, 4096, 2)
	errc := make(chan error, 1)
	go func() {
		_, err := ra.Read(make([]byte, 10))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	ra.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("read during Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read still waiting after Close")
	}
	if _, err := ra.Read(make([]byte, 1)); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("read after Close: %v", err)
	}
}

// gatedReader passes on what the test sends it, and EOF once closed.
type gatedReader struct {
	ch  chan []byte
	cur []byte
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if len(g.cur) == 0 {
		b, ok := <-g.ch
		if !ok {
			return 0, io.EOF
		}
		g.cur = b
	}
	n := copy(p, g.cur)
	g.cur = g.cur[n:]
	return n, nil
}

// TestGrowing: the bound doubles, up to its most, each time the buffers
// were all full and then all drained, and not while a slower consumer
// keeps them full; every byte passes through in order.
func TestGrowing(t *testing.T) {
	const size = 4096
	src := &gatedReader{ch: make(chan []byte)}
	ra := NewGrowing(src, size, 2, 6)
	defer ra.Close()
	data := randomBytes(64 * size)
	sent, got := 0, []byte{}
	// cycle sends n buffers' worth, waits until the goroutine finds no
	// free buffer (when n is over the bound), then reads all of it and
	// one buffer more, sent after the Read has found nothing ahead (a
	// buffer is passed on whole).
	cycle := func(n int) {
		t.Helper()
		go func() {
			src.ch <- data[sent : sent+n*size]
		}()
		for i := 0; i < 1000 && !ra.waited.Load(); i++ {
			time.Sleep(time.Millisecond)
		}
		if !ra.waited.Load() {
			t.Fatalf("the goroutine never waited for a buffer (bound %d, %d sent)", ra.Buffers(), n)
		}
		p := make([]byte, n*size)
		if _, err := io.ReadFull(ra, p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p...)
		sent += n * size
		go func() {
			time.Sleep(20 * time.Millisecond)
			src.ch <- data[sent : sent+size]
		}()
		one := make([]byte, size)
		if _, err := io.ReadFull(ra, one); err != nil {
			t.Fatal(err)
		}
		got = append(got, one...)
		sent += size
	}
	for _, want := range []int{4, 6, 6} {
		cycle(ra.Buffers() + 1)
		if ra.Buffers() != want {
			t.Fatalf("bound %d buffers after a fill and a drain, want %d", ra.Buffers(), want)
		}
	}
	close(src.ch)
	rest, err := io.ReadAll(ra)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, rest...)
	if !bytes.Equal(got, data[:sent]) {
		t.Fatalf("%d bytes read, not the %d sent", len(got), sent)
	}

	// A consumer slower than its source throughout: the buffers stay
	// full, and the bound where it started.
	fast := &countingReader{}
	slow := NewGrowing(fast, size, 2, 8)
	defer slow.Close()
	for range 50 {
		time.Sleep(2 * time.Millisecond)
		if _, err := io.ReadFull(slow, make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	if slow.Buffers() != 2 {
		t.Fatalf("a consumer slower throughout grew the bound to %d", slow.Buffers())
	}
}
