// Package s3bundles keeps a repository's clone bundles in an
// S3-compatible object store (Amazon S3, SeaweedFS, MinIO, ...): it
// uploads bundle files, writes .hg/clonebundles.manifest in hg's format
// (hgext/clonebundles.py) with URLs a client fetches without credentials,
// and deletes the objects of earlier refreshes once their grace period is
// over. This package names objects, checks them, and keeps the manifest
// and its state file; the S3 protocol is minio-go's, in package s3client,
// which runs in the helper process hgfs-s3 (helper.go says why).
package s3bundles

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Config is where the store is and how to reach it. Empty fields are
// taken from the environment as AWS's clients read it (FillFromEnv).
type Config struct {
	// Endpoint is the store's URL ("http://127.0.0.1:8333",
	// "https://s3.example.com"); empty means Amazon S3 in Region.
	Endpoint  string
	Region    string
	AccessKey string
	SecretKey string
	// SessionToken goes with temporary credentials (AWS_SESSION_TOKEN).
	SessionToken string
	// PublicURL, when set, is the base URL clients fetch objects under
	// (a public-read bucket, or a CDN in front of it): an object's URL
	// is PublicURL + "/" + its key. Otherwise the manifest holds
	// pre-signed URLs valid for URLExpiry.
	PublicURL string
	URLExpiry time.Duration
	// Grace is how long the objects of a replaced manifest stay in the
	// store for the downloads that started before the replacement (0:
	// deleted at the next refresh).
	Grace time.Duration
	// Timeout bounds each request to the store (0: none).
	Timeout time.Duration
}

// Defaults of Config's durations.
const (
	// DefaultURLExpiry is the longest a SigV4 pre-signed URL may live.
	DefaultURLExpiry = 7 * 24 * time.Hour
	DefaultGrace     = 24 * time.Hour
	DefaultTimeout   = 60 * time.Second
)

// FillFromEnv fills the fields left empty from getenv: AWS_ENDPOINT_URL_S3
// or AWS_ENDPOINT_URL, AWS_REGION or AWS_DEFAULT_REGION,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
func (c *Config) FillFromEnv(getenv func(string) string) {
	first := func(dst *string, names ...string) {
		for _, n := range names {
			if *dst == "" {
				*dst = getenv(n)
			}
		}
	}
	first(&c.Endpoint, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	first(&c.Region, "AWS_REGION", "AWS_DEFAULT_REGION")
	first(&c.AccessKey, "AWS_ACCESS_KEY_ID")
	first(&c.SecretKey, "AWS_SECRET_ACCESS_KEY")
	first(&c.SessionToken, "AWS_SESSION_TOKEN")
}

// Target is an s3://BUCKET/PREFIX location.
type Target struct {
	Bucket, Prefix string
}

func (t Target) String() string { return "s3://" + t.Bucket + "/" + t.Prefix }

// bucketRe is S3's bucket naming rule, compiled when first used (every
// hgfs process links this package; few name a bucket).
var bucketRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`) })

// ParseTarget parses s3://BUCKET[/PREFIX]; the prefix loses its
// surrounding slashes.
func ParseTarget(s string) (Target, error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		return Target{}, fmt.Errorf("%q is not an s3://BUCKET/PREFIX location", s)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if !bucketRe().MatchString(bucket) {
		return Target{}, fmt.Errorf("invalid bucket name %q in %s", bucket, s)
	}
	prefix = strings.Trim(prefix, "/")
	if strings.Contains(prefix, "//") || strings.ContainsAny(prefix, "\x00\n\r") {
		return Target{}, fmt.Errorf("invalid object prefix %q in %s", prefix, s)
	}
	return Target{Bucket: bucket, Prefix: prefix}, nil
}

// Key is the object key of name under the target's prefix.
func (t Target) Key(name string) string {
	if t.Prefix == "" {
		return name
	}
	return t.Prefix + "/" + name
}

// Object is a bundle in the store.
type Object struct {
	Key    string
	Size   int64
	SHA256 string // hex
}

// FileSHA256 is the SHA-256 (hex) and size of the file at path.
func FileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
