package wireproto

import (
	"bytes"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestStreamOutLargeFiles: stream_out is sent with a Content-Length and
// its large files with sendfile (streamBuffer.ReadFrom); the length must
// be exact and hg must clone from it a repository that verifies, with
// the large file intact.
func TestStreamOutLargeFiles(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	testenv.Hg(t, "", "init", src)
	big := make([]byte, 300<<10) // incompressible: the revlog stays > prefetchMax
	rand.New(rand.NewSource(1)).Read(big)
	for i, name := range []string{"big.bin", "small.txt"} {
		data := big
		if i == 1 {
			data = []byte("small\n")
		}
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Hg(t, src, "commit", "-A", "-m", "big")
	url := startServer(t, src, testConfig())

	resp := rawGet(t, url, "stream_out", nil, "")
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != int64(len(body)) || len(body) < len(big) {
		t.Fatalf("Content-Length %d, body %d bytes", resp.ContentLength, len(body))
	}
	if !bytes.HasPrefix(body, []byte("0\n")) {
		t.Fatalf("stream_out status: %q", body[:min(len(body), 20)])
	}
	dest := cloneFrom(t, url, "--config", "devel.legacy.exchange=bundle1")
	if got := testenv.Hg(t, dest, "cat", "-r", "tip", "big.bin"); !bytes.Equal(got, big) {
		t.Errorf("big.bin differs in the clone (%d bytes)", len(got))
	}
}
