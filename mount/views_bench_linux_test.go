//go:build linux

package mount

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// BenchmarkViewsGrep runs grep -r over a real checkout on the native disk
// (page cache warm) and over .hgfs/rev/tip of a repository view of the
// same repository: first read (just mounted: nothing reconstructed, no
// kernel pages) and second read (the kernel keeps the pages of a
// changeset's files). HGFS_BENCH_FILES sets the size (default 3000 files).
//
//	go test -run '^$' -bench ViewsGrep -benchtime 3x ./mount/
func BenchmarkViewsGrep(b *testing.B) {
	testenv.RequireFUSE(b)
	n := 3000
	if s := os.Getenv("HGFS_BENCH_FILES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	repo := testenv.Generate(b, testenv.Large(n))
	checkout := filepath.Join(b.TempDir(), "co")
	testenv.Hg(b, repo, "archive", "-r", "tip", checkout)
	grep := func(b *testing.B, dir string) {
		// grep exits 1 when nothing matches; only 2 is an error.
		cmd := exec.Command("grep", "-r", "-c", "hgfs-no-such-string", dir)
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				b.Fatalf("grep -r %s: %v", dir, err)
			}
		}
	}
	b.Run("native", func(b *testing.B) {
		grep(b, checkout)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			grep(b, checkout)
		}
	})
	mountView := func(b *testing.B) *Server {
		srv, err := MountRepo(repo, b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		return srv
	}
	b.Run("view-first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			srv := mountView(b)
			b.StartTimer()
			grep(b, filepath.Join(srv.Mountpoint(), VirtualDirName, "rev", "tip"))
			b.StopTimer()
			if err := srv.Unmount(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("view-second", func(b *testing.B) {
		srv := mountView(b)
		defer srv.Unmount()
		dir := filepath.Join(srv.Mountpoint(), VirtualDirName, "rev", "tip")
		grep(b, dir)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			grep(b, dir)
		}
	})
}
