// Package s3client is s3bundles' object store: minio-go's S3 client,
// which uploads, checks, signs URLs for, deletes and fetches bundle
// objects. Only the helper hgfs-s3 (cmd/hgfs-s3) links it; Serve is the
// helper's side of s3bundles' helper protocol.
package s3client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/hgfs/hgfs/s3bundles"
)

// metaSHA256 is the user metadata holding an object's SHA-256 (hex),
// which tells a finished upload of the same bytes from a partial one.
const metaSHA256 = "Hgfs-Sha256"

// Store is one target in one object store.
type Store struct {
	cfg    s3bundles.Config
	target s3bundles.Target
	client *minio.Client
}

// Open makes the client for target and checks that its bucket exists:
// a store that does not answer, refuses the credentials, or lacks the
// bucket is an error here, before anything is written.
func Open(ctx context.Context, cfg s3bundles.Config, target s3bundles.Target) (*Store, error) {
	s, err := newStore(cfg, target)
	if err != nil {
		return nil, err
	}
	client := s.client
	cctx, cancel := s.reqCtx(ctx)
	defer cancel()
	ok, err := client.BucketExists(cctx, target.Bucket)
	if err != nil {
		return nil, s.errorf("checking bucket %s at %s", err, target.Bucket, client.EndpointURL().Host)
	}
	if !ok {
		return nil, fmt.Errorf("bucket %s does not exist at %s", target.Bucket, client.EndpointURL().Host)
	}
	return s, nil
}

// newStore makes the client for target, contacting nobody.
func newStore(cfg s3bundles.Config, target s3bundles.Target) (*Store, error) {
	endpoint, secure := "s3.amazonaws.com", true
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("invalid S3 endpoint %q (want http(s)://HOST[:PORT])", cfg.Endpoint)
		}
		endpoint, secure = u.Host, u.Scheme == "https"
	} else if cfg.Region != "" {
		endpoint = "s3." + cfg.Region + ".amazonaws.com"
	}
	if cfg.URLExpiry <= 0 {
		cfg.URLExpiry = s3bundles.DefaultURLExpiry
	}
	if cfg.URLExpiry > s3bundles.DefaultURLExpiry {
		return nil, fmt.Errorf("pre-signed URLs live at most %v, not %v", s3bundles.DefaultURLExpiry, cfg.URLExpiry)
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("invalid public URL %q (want http(s)://...)", cfg.PublicURL)
		}
		cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	}
	var creds *credentials.Credentials
	if cfg.AccessKey != "" || cfg.SecretKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	} else {
		// No keys: anonymous requests (a public bucket) unless the
		// shared credentials file names some.
		creds = credentials.NewChainCredentials([]credentials.Provider{&credentials.FileAWSCredentials{}})
	}
	tr, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, err
	}
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = cfg.Timeout
	client, err := minio.New(endpoint, &minio.Options{
		Creds: creds, Secure: secure, Region: cfg.Region, Transport: tr,
		BucketLookup: minio.BucketLookupPath, MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", endpoint, err)
	}
	return &Store{cfg: cfg, target: target, client: client}, nil
}

// reqCtx bounds one request by the configured timeout.
func (s *Store) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.Timeout > 0 {
		return context.WithTimeout(ctx, s.cfg.Timeout)
	}
	return context.WithCancel(ctx)
}

// errorf words a store error: S3's code and message when the store
// answered, the network error when it did not.
func (s *Store) errorf(what string, err error, args ...any) error {
	msg := fmt.Sprintf(what, args...)
	var er minio.ErrorResponse
	if errors.As(err, &er) && er.Code != "" {
		return fmt.Errorf("%s: %s (%s, HTTP %d)", msg, er.Message, er.Code, er.StatusCode)
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// Upload puts the file at path as name under the target's prefix, unless
// an object of that name with the same size and SHA-256 is there already
// (an upload an interrupted refresh finished). Large files go up in
// 16 MiB parts, four at once, each with a Content-MD5 the store checks.
func (s *Store) Upload(ctx context.Context, name, path, sum string, size int64) (s3bundles.Object, error) {
	key := s.target.Key(name)
	obj := s3bundles.Object{Key: key, Size: size, SHA256: sum}
	if have, err := s.stat(ctx, key); err == nil && have.Size == size && have.SHA256 == sum {
		return obj, nil
	}
	info, err := s.client.FPutObject(ctx, s.target.Bucket, key, path, minio.PutObjectOptions{
		ContentType:    "application/mercurial-bundle",
		UserMetadata:   map[string]string{metaSHA256: sum},
		SendContentMd5: true,
		PartSize:       16 << 20,
		NumThreads:     4,
	})
	if err != nil {
		return s3bundles.Object{}, s.errorf("uploading %s to %s", err, path, s.target.Bucket+"/"+key)
	}
	if info.Size != size {
		return s3bundles.Object{}, fmt.Errorf("uploading %s: the store took %d bytes of %d", key, info.Size, size)
	}
	// What the store reports holding: its size, and the SHA-256 recorded
	// with it (the bytes themselves were checked part by part against
	// their Content-MD5 by the store).
	have, err := s.stat(ctx, key)
	if err != nil {
		return s3bundles.Object{}, err
	}
	if have.Size != size || have.SHA256 != sum {
		return s3bundles.Object{}, fmt.Errorf("uploaded %s holds %d bytes (SHA-256 %q), want %d (%s)", key, have.Size, have.SHA256, size, sum)
	}
	return obj, nil
}

// stat reads an object's size and recorded SHA-256.
func (s *Store) stat(ctx context.Context, key string) (s3bundles.Object, error) {
	cctx, cancel := s.reqCtx(ctx)
	defer cancel()
	info, err := s.client.StatObject(cctx, s.target.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return s3bundles.Object{}, s.errorf("checking %s", err, key)
	}
	sum := info.UserMetadata[metaSHA256]
	if sum == "" {
		sum = info.Metadata.Get("X-Amz-Meta-" + metaSHA256)
	}
	return s3bundles.Object{Key: key, Size: info.Size, SHA256: sum}, nil
}

// URL is the address clients download key from: under PublicURL, or
// pre-signed for URLExpiry.
func (s *Store) URL(ctx context.Context, key string) (string, error) {
	if s.cfg.PublicURL != "" {
		parts := strings.Split(key, "/")
		for i, p := range parts {
			parts[i] = url.PathEscape(p)
		}
		return s.cfg.PublicURL + "/" + strings.Join(parts, "/"), nil
	}
	u, err := s.client.PresignedGetObject(ctx, s.target.Bucket, key, s.cfg.URLExpiry, nil)
	if err != nil {
		return "", s.errorf("pre-signing %s", err, key)
	}
	return u.String(), nil
}

// Remove deletes key; one already gone is not an error.
func (s *Store) Remove(ctx context.Context, key string) error {
	cctx, cancel := s.reqCtx(ctx)
	defer cancel()
	err := s.client.RemoveObject(cctx, s.target.Bucket, key, minio.RemoveObjectOptions{})
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.StatusCode == http.StatusNotFound || er.Code == "NoSuchKey") {
		return nil
	}
	if err != nil {
		return s.errorf("deleting %s", err, key)
	}
	return nil
}

// Target is where the store puts objects.
func (s *Store) Target() s3bundles.Target { return s.target }

// OpenObject starts the download of the object s3://BUCKET/KEY (loc, as
// ParseTarget reads it: the prefix is the key) with cfg's endpoint and
// credentials: only the object is asked for (GetObject), not the bucket,
// so read access to the object is enough. The first bytes are fetched
// here, so a store that does not answer, a refusal and a missing object
// are errors before anything is written. Reading the rest reports a
// download cut short as io.ErrUnexpectedEOF.
func OpenObject(ctx context.Context, cfg s3bundles.Config, loc s3bundles.Target) (io.ReadCloser, error) {
	if loc.Prefix == "" {
		return nil, fmt.Errorf("%s names no object", loc)
	}
	s, err := newStore(cfg, loc)
	if err != nil {
		return nil, err
	}
	// The request is bounded by cfg.Timeout until the store answers
	// (the transport's ResponseHeaderTimeout), not while the body is read.
	obj, err := s.client.GetObject(ctx, loc.Bucket, loc.Prefix, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.errorf("fetching %s", err, loc)
	}
	// bufio keeps reads large: each Read of a minio Object is a round
	// trip to its fetching goroutine.
	r := bufio.NewReaderSize(obj, 256<<10)
	if _, err := r.Peek(1); err != nil && err != io.EOF {
		obj.Close()
		return nil, s.errorf("fetching %s from %s", err, loc, s.client.EndpointURL().Host)
	}
	return struct {
		io.Reader
		io.Closer
	}{r, obj}, nil
}
