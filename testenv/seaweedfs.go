package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// SeaweedFSVersion is the SeaweedFS that scripts/seaweedfs.sh builds.
const SeaweedFSVersion = "v0.0.0-20261109003541-7506e5f91cd6"

// WeedPath is SeaweedFS's weed command: $HGFS_WEED, else what
// scripts/seaweedfs.sh caches, else weed on PATH. It skips the test (fails
// on CI) when there is none.
func WeedPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("HGFS_WEED"); p != "" {
		return p
	}
	dir := os.Getenv("HGFS_SEAWEEDFS_DIR")
	if dir == "" {
		dir = "/var/cache/hgfs/seaweedfs"
	}
	if p := filepath.Join(dir, "weed-"+SeaweedFSVersion); isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath("weed"); err == nil {
		return p
	}
	Missing(t, "SeaweedFS's weed is not built (scripts/seaweedfs.sh)")
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// S3Server is a SeaweedFS cluster of one node (master, volume server,
// filer and S3 gateway in one `weed server -s3` process) on loopback.
type S3Server struct {
	// Endpoint is the S3 gateway's URL, "http://127.0.0.1:PORT".
	Endpoint string
	// AccessKey and SecretKey are an identity allowed everything.
	AccessKey, SecretKey string
	// PublicBucket is a bucket anyone may read without credentials.
	PublicBucket string
	// Buckets are created at start: PublicBucket and "bundles".
	Buckets []string
	// PID is the weed process's, for CPU accounting.
	PID int
}

// Client is an S3 client with the server's credentials.
func (s *S3Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// freePorts returns n loopback ports nothing listened on a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for len(ports) < n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		p := ln.Addr().(*net.TCPAddr).Port
		// weed derives nothing from these, but keep them out of the
		// range a +10000 gRPC default would use.
		if p < 55535 {
			ports = append(ports, p)
		}
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// StartSeaweedFS starts SeaweedFS on loopback with its data in a
// temporary directory, waits until its S3 gateway answers and the
// buckets exist, and stops it when the test ends.
func StartSeaweedFS(t testing.TB) *S3Server {
	t.Helper()
	weed := WeedPath(t)
	dir := t.TempDir()
	s := &S3Server{AccessKey: "hgfs-test-access", SecretKey: "hgfs-test-secret-0123456789", PublicBucket: "public", Buckets: []string{"public", "bundles"}}
	conf := map[string]any{"identities": []any{
		map[string]any{"name": "hgfs", "credentials": []any{map[string]string{"accessKey": s.AccessKey, "secretKey": s.SecretKey}},
			"actions": []string{"Admin", "Read", "List", "Tagging", "Write"}},
		map[string]any{"name": "anonymous", "actions": []string{"Read:" + s.PublicBucket}},
	}}
	data, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(confPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	data0 := filepath.Join(dir, "data")
	if err := os.Mkdir(data0, 0o755); err != nil {
		t.Fatal(err)
	}
	p := freePorts(t, 8)
	s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(p[6])
	args := []string{"server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + data0,
		"-master.port=" + strconv.Itoa(p[0]), "-master.port.grpc=" + strconv.Itoa(p[1]),
		"-volume.port=" + strconv.Itoa(p[2]), "-volume.port.grpc=" + strconv.Itoa(p[3]),
		"-filer", "-filer.port=" + strconv.Itoa(p[4]), "-filer.port.grpc=" + strconv.Itoa(p[5]),
		"-filer.localSocket=" + filepath.Join(dir, "filer.sock"),
		"-s3", "-s3.port=" + strconv.Itoa(p[6]), "-s3.port.grpc=" + strconv.Itoa(p[7]),
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config=" + confPath,
		"-master.telemetry=false", "-master.volumeSizeLimitMB=256", "-volume.max=64",
		"-volume.minFreeSpace=64MiB",
	}
	cmd := exec.Command(weed, args...)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("weed server: %v", err)
	}
	s.PID = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			// weed server is one process: its master, volume server,
			// filer and S3 gateway are goroutines.
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	t.Cleanup(stop)
	logTail := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		return string(b)
	}
	// Ready when a bucket can be made and an object written and read.
	c := s.Client(t)
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for _, b := range s.Buckets {
		for {
			select {
			case <-exited:
				t.Fatalf("weed server exited:\n%s", logTail())
			default:
			}
			last = s.ready(c, b)
			if last == nil {
				break
			}
			if time.Now().After(deadline) {
				stop()
				t.Fatalf("SeaweedFS not ready in 90s: %v\n%s", last, logTail())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return s
}

// ready makes bucket (if missing) and round-trips an object in it.
func (s *S3Server) ready(c *minio.Client, bucket string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok, err := c.BucketExists(ctx, bucket)
	if err != nil {
		return err
	}
	if !ok {
		if err := c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
			return err
		}
	}
	const probe = ".hgfs-ready"
	if _, err := c.PutObject(ctx, bucket, probe, strings.NewReader("ok"), 2, minio.PutObjectOptions{}); err != nil {
		return err
	}
	defer c.RemoveObject(ctx, bucket, probe, minio.RemoveObjectOptions{})
	o, err := c.GetObject(ctx, bucket, probe, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer o.Close()
	buf := make([]byte, 8)
	n, _ := o.Read(buf)
	if string(buf[:n]) != "ok" {
		return fmt.Errorf("probe object read back %q", buf[:n])
	}
	return nil
}

// PublicURL is the URL an object of the public bucket is read at without
// credentials.
func (s *S3Server) PublicURL() string { return s.Endpoint + "/" + s.PublicBucket }

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
