// Package seaweed runs SeaweedFS (github.com/seaweedfs/seaweedfs) as a
// one-node S3-compatible object store on loopback, for the tests
// (testenv.StartSeaweedFS) and the bench: `weed server -s3` (master,
// volume server, filer and S3 gateway in one process) with its data in a
// directory of the caller's, an identity allowed everything, anonymous
// reads of one public bucket, and the buckets made before Start returns.
// Its weed binary is built by scripts/seaweedfs.sh.
package seaweed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Version is the SeaweedFS scripts/seaweedfs.sh builds.
const Version = "v0.0.0-20261109003541-7506e5f91cd6"

// ErrNoWeed is Find's error when there is no weed binary.
var ErrNoWeed = errors.New("SeaweedFS's weed is not built (scripts/seaweedfs.sh)")

// Find returns the weed command: $HGFS_WEED, else what
// scripts/seaweedfs.sh caches ($HGFS_SEAWEEDFS_DIR or
// /var/cache/hgfs/seaweedfs), else weed on PATH.
func Find() (string, error) {
	if p := os.Getenv("HGFS_WEED"); p != "" {
		return p, nil
	}
	dir := os.Getenv("HGFS_SEAWEEDFS_DIR")
	if dir == "" {
		dir = "/var/cache/hgfs/seaweedfs"
	}
	p := filepath.Join(dir, "weed-"+Version)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p, nil
	}
	if p, err := exec.LookPath("weed"); err == nil {
		return p, nil
	}
	return "", ErrNoWeed
}

// Server is a running SeaweedFS.
type Server struct {
	// Endpoint is the S3 gateway's URL, "http://127.0.0.1:PORT".
	Endpoint string
	// AccessKey and SecretKey are an identity allowed everything.
	AccessKey, SecretKey string
	// PublicBucket is the bucket anyone may read without credentials.
	PublicBucket string
	// Buckets are made at start: PublicBucket and "bundles".
	Buckets []string
	// PID is the weed process's.
	PID int
	// Log is weed's output.
	Log string

	stopOnce sync.Once
	stop     func()
}

// Stop ends the server (SIGINT, then SIGKILL after 15 s).
func (s *Server) Stop() { s.stopOnce.Do(s.stop) }

// Client is an S3 client with the server's credentials.
func (s *Server) Client() (*minio.Client, error) {
	return minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath,
	})
}

// PublicURL is the base URL of the public bucket's objects.
func (s *Server) PublicURL() string { return s.Endpoint + "/" + s.PublicBucket }

// freePorts returns n loopback ports nothing listened on a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for len(ports) < n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Start runs weed with its data and log in dir (which must exist) and
// waits, at most timeout, until each bucket can be written and read.
func Start(weed, dir string, timeout time.Duration) (*Server, error) {
	s := &Server{AccessKey: "hgfs-test-access", SecretKey: "hgfs-test-secret-0123456789", PublicBucket: "public",
		Buckets: []string{"public", "bundles"}, Log: filepath.Join(dir, "weed.log")}
	conf, err := json.Marshal(map[string]any{"identities": []any{
		map[string]any{"name": "hgfs", "credentials": []any{map[string]string{"accessKey": s.AccessKey, "secretKey": s.SecretKey}},
			"actions": []string{"Admin", "Read", "List", "Tagging", "Write"}},
		map[string]any{"name": "anonymous", "actions": []string{"Read:" + s.PublicBucket}},
	}})
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	p, err := freePorts(8)
	if err != nil {
		return nil, err
	}
	port := func(i int) string { return strconv.Itoa(p[i]) }
	s.Endpoint = "http://127.0.0.1:" + port(6)
	// -logdir keeps glog's files out of /tmp; the gRPC sockets weed
	// names itself (/tmp/seaweedfs-NAME-grpc-PORT.sock, fixed in its
	// server command) are removed when it stops.
	cmd := exec.Command(weed, "-logdir="+dir, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir="+data,
		"-master.port="+port(0), "-master.port.grpc="+port(1),
		"-volume.port="+port(2), "-volume.port.grpc="+port(3),
		"-filer", "-filer.port="+port(4), "-filer.port.grpc="+port(5),
		"-filer.localSocket="+filepath.Join(dir, "filer.sock"),
		"-s3", "-s3.port="+port(6), "-s3.port.grpc="+port(7),
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.config="+confPath,
		"-master.telemetry=false", "-master.volumeSizeLimitMB=256", "-volume.max=64",
		"-volume.minFreeSpace=64MiB")
	cmd.Dir = dir
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("weed server: %w", err)
	}
	s.PID = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	s.stop = func() {
		// weed server is one process: its master, volume server, filer
		// and S3 gateway are goroutines. It is killed, not asked to
		// stop: asked (SIGINT or SIGTERM, with -volume.preStopSeconds=0
		// too) it had not exited 15 seconds later, every time, and its
		// data is thrown away with its directory.
		_ = cmd.Process.Kill()
		<-exited
		for _, g := range []struct {
			name string
			port int
		}{{"master", p[1]}, {"volume", p[3]}, {"filer", p[5]}, {"s3", p[7]}} {
			_ = os.Remove(fmt.Sprintf("/tmp/seaweedfs-%s-grpc-%d.sock", g.name, g.port))
		}
	}
	c, err := s.Client()
	if err != nil {
		s.Stop()
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for _, b := range s.Buckets {
		for {
			select {
			case <-exited:
				return nil, fmt.Errorf("weed server exited:\n%s", s.logTail())
			default:
			}
			err := ready(c, b)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				s.Stop()
				return nil, fmt.Errorf("SeaweedFS not ready in %v: %v\n%s", timeout, err, s.logTail())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return s, nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.Log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// ready makes bucket (if missing) and round-trips an object in it.
func ready(c *minio.Client, bucket string) error {
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
