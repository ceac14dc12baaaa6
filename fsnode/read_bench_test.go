package fsnode

import (
	"math/rand/v2"
	"syscall"
	"testing"
)

// BenchmarkRead64MiB reads a 64 MiB file (written in 128 KiB writes)
// through a handle: whole in 128 KiB reads, and in 2048 random 4 KiB
// reads. Each iteration reopens the cache, so that nothing read before is
// remembered (the checksums are verified again); the data files stay in
// the page cache, so this measures the CPU cost of reading (copies and
// CRC32C), not the disk.
func BenchmarkRead64MiB(b *testing.B) {
	const size, chunk = 64 << 20, 128 << 10
	dir := b.TempDir()
	f, err := Create(dir, Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	a, h, err := f.Create(bg, RootIno, "big", 0o644, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, chunk)
	for off := 0; off < size; off += chunk {
		for i := range buf {
			buf[i] = byte(off>>17 + i)
		}
		if _, err := f.Write(bg, h, int64(off), buf); err != nil {
			b.Fatal(err)
		}
	}
	f.Release(h)
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, bytes int64, read func(f *FS, h Handle)) {
		b.SetBytes(bytes)
		for b.Loop() {
			b.StopTimer()
			f, err := Open(dir, Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			h, err := f.Open(bg, a.Ino, syscall.O_RDONLY)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			read(f, h)
			b.StopTimer()
			f.Release(h)
			f.Close()
			b.StartTimer()
		}
	}
	b.Run("seq128k", func(b *testing.B) {
		run(b, size, func(f *FS, h Handle) {
			for off := int64(0); off < size; off += chunk {
				if n, err := f.Read(bg, h, off, buf); err != nil || n != chunk {
					b.Fatalf("read at %d: %d, %v", off, n, err)
				}
			}
		})
	})
	b.Run("rand4k", func(b *testing.B) {
		const reads = 2048
		run(b, reads*4096, func(f *FS, h Handle) {
			rng := rand.New(rand.NewPCG(1, 2))
			for range reads {
				off := rng.Int64N(size/4096) * 4096
				if n, err := f.Read(bg, h, off, buf[:4096]); err != nil || n != 4096 {
					b.Fatalf("read at %d: %d, %v", off, n, err)
				}
			}
		})
	})
}
