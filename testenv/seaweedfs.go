package testenv

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/hgfs/hgfs/internal/seaweed"
)

// S3Server is a SeaweedFS object store of one node on loopback
// (internal/seaweed).
type S3Server struct {
	*seaweed.Server
}

// Client is an S3 client with the server's credentials.
func (s *S3Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := s.Server.Client()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// StartSeaweedFS starts SeaweedFS on loopback with its data in a
// temporary directory, its buckets made ("bundles", and "public" that
// anyone reads), and stops it when the test ends. It skips the test (fails
// on CI) when weed is not built (scripts/seaweedfs.sh).
func StartSeaweedFS(t testing.TB) *S3Server {
	t.Helper()
	weed, err := seaweed.Find()
	if errors.Is(err, seaweed.ErrNoWeed) {
		Missing(t, err.Error())
	}
	s, err := seaweed.Start(weed, t.TempDir(), 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return &S3Server{s}
}

// Get fetches url without credentials: its status and body.
func Get(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
