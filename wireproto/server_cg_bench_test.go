//go:build unix

package wireproto

import (
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/hgfs/hgfs/bundle2"
)

// BenchmarkServeChangegroup measures a whole changegroup clone request
// (getbundle of everything, cg=1, zstd) through the handler into a
// discarding response: what hgfs serve's CPU per `hg clone` is. Set
// HGFS_BENCH_REPO to make bench's real-history store (history-2971 in
// its cache) to profile the clone the bench times.
func BenchmarkServeChangegroup(b *testing.B) {
	root := benchRepo(b)
	srv, err := NewServer(root, DefaultServerConfig())
	if err != nil {
		b.Fatal(err)
	}
	caps := Bundle2Caps{"HG20": nil, "bookmarks": nil, "changegroup": {"01", "02"}, "listkeys": nil, "phases": {"heads"}}
	var n int64
	cpu0 := processCPU(b)
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodGet, "/?cmd=getbundle", nil)
		req.Header.Set("X-HgArg-1", formEncode(map[string]string{"bundlecaps": "HG20,bundle2=" + bundle2.Quote(caps.Encode()),
			"cg": "1", "common": NullHex, "listkeys": "bookmarks", "phases": "1"}))
		req.Header.Set("X-HgProto-1", "0.1 0.2 comp=zstd,zlib,none")
		w := &discardResponse{h: http.Header{}}
		srv.ServeHTTP(w, req)
		n = w.n
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.SetBytes(n)
}

// processCPU is the process's user+system time: on a shared machine
// steadier than the wall time a benchmark reports.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
