package streamclone

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
)

// vmHWM returns the process's peak resident set (Linux), or -1.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}

// BenchmarkApplyLarge streams a synthetic stream2 bundle of files×size
// bytes (generated on the fly, never held in memory) into a DirSink and
// reports throughput and the process's peak RSS, which must not grow with
// the store size.
func BenchmarkApplyLarge(b *testing.B) {
	for _, files := range []int{4, 64} {
		b.Run(fmt.Sprintf("%dMiB", files*16), func(b *testing.B) { benchApply(b, files, 16<<20) })
	}
}

func benchApply(b *testing.B, files, size int) {
	chunk := bytes.Repeat([]byte("revlog data "), 1<<14)
	for i := 0; i < b.N; i++ {
		pr, pw := io.Pipe()
		go func() {
			bw, _ := bundle2.NewWriter(pw)
			part, _ := bw.NewPart("stream2", true, []bundle2.Param{
				{Name: "bytecount", Value: strconv.Itoa(files * size)}, {Name: "filecount", Value: strconv.Itoa(files)}, {Name: "requirements", Value: bundle2.Quote(testReqs)}}, nil)
			for f := 0; f < files; f++ {
				name := fmt.Sprintf("data/file%d.d", f)
				hdr := []byte{'s'}
				hdr = binary.AppendUvarint(hdr, uint64(len(name)))
				hdr = binary.AppendUvarint(hdr, uint64(size))
				part.Write(append(hdr, name...))
				for n := 0; n < size; n += len(chunk) {
					part.Write(chunk[:min(len(chunk), size-n)])
				}
			}
			part.Close()
			pw.CloseWithError(bw.Close())
		}()
		dest := filepath.Join(b.TempDir(), "d")
		sink, err := NewDirSink(dest, DefaultDirOptions())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ApplyBundle(context.Background(), pr, sink, Options{}); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dest)
	}
	b.SetBytes(int64(files * size))
	b.ReportMetric(float64(vmHWM())/(1<<20), "peakRSS-MiB")
}
