//go:build linux

package mount

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hgfs/hgfs/testenv"
)

// BenchmarkCloseLatency times close(2) of freshly written small files (the
// cost hgfs exists to remove) through the mount and on the directory the
// test's temporary files live in. Reported: p50 and p99 of close alone.
//
//	go test -run '^$' -bench CloseLatency ./mount/
func BenchmarkCloseLatency(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 300)
	bench := func(b *testing.B, dir string) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("f%07d.i", i)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Write(payload); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			err = f.Close()
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportLatencies(b, lat, "close")
	}
	benchNativeAndMount(b, bench)
}

// BenchmarkCatTree reads every file of a tree with cat, on the native
// filesystem (page cache warm) and through the mount, cold (just mounted:
// the kernel holds no pages) and warm (read before).
//
//	go test -run '^$' -bench CatTree -benchtime 5x ./mount/
func BenchmarkCatTree(b *testing.B) {
	src := b.TempDir()
	var total int64
	for i := 0; i < 2000; i++ {
		d := filepath.Join(src, fmt.Sprintf("d%02d", i%40))
		os.MkdirAll(d, 0o755)
		data := bytes.Repeat([]byte{byte(i)}, 512+(i*7919)%32768)
		total += int64(len(data))
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.i", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	catAll := func(b *testing.B, dir string) {
		cmd := testenv.Command(dir, "sh", "-c", "find . -type f -print0 | xargs -0 cat > /dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
	b.Run("native", func(b *testing.B) {
		catAll(b, src)
		b.SetBytes(total)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			catAll(b, src)
		}
	})
	m := newMount(b)
	if out, err := exec.Command("cp", "-a", src+"/.", m.mp).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v\n%s", err, out)
	}
	b.Run("mount-cold", func(b *testing.B) {
		b.SetBytes(total)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			m.remount(b)
			b.StartTimer()
			catAll(b, m.mp)
		}
	})
	b.Run("mount-warm", func(b *testing.B) {
		catAll(b, m.mp)
		b.SetBytes(total)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			catAll(b, m.mp)
		}
	})
}

// BenchmarkSmallWrite times 10-byte write(2)s appended to one open file,
// on the native file system and through the mount, where each is a
// WRITE round trip (and, without FUSE_HANDLE_KILLPRIV_V2, a GETXATTR of
// security.capability before it). Reported: p50 and p99 of one write.
//
//	go test -run '^$' -bench SmallWrite -count 5 ./mount/
func BenchmarkSmallWrite(b *testing.B) {
	payload := []byte("0123456789")
	bench := func(b *testing.B, dir string) {
		f, err := os.Create(filepath.Join(dir, "f"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(payload); err != nil {
			b.Fatal(err)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			_, err := f.Write(payload)
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		reportLatencies(b, lat, "write")
	}
	benchNativeAndMount(b, bench)
}

// reportLatencies reports the p50 and p99 of lat as metrics named after
// what was timed.
func reportLatencies(b *testing.B, lat []time.Duration, what string) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-"+what+"-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-"+what+"-ns")
}

// benchNativeAndMount runs bench in a native temporary directory and at
// the root of a fresh mount.
func benchNativeAndMount(b *testing.B, bench func(b *testing.B, dir string)) {
	b.Run("native", func(b *testing.B) { bench(b, b.TempDir()) })
	b.Run("mount", func(b *testing.B) {
		m := newMount(b)
		bench(b, m.mp)
	})
}
