package s3bundles

// A refresh: upload the bundles just written, replace the manifest, then
// forget (and after the grace period delete) what the previous manifests
// listed. The state file (.hg/clonebundles.s3state, JSON) remembers the
// objects the current manifest lists and those retired from earlier ones
// with the time they left, so the deletion can wait for downloads that
// began before the manifest changed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hgfs/hgfs/internal/sysio"
	"github.com/hgfs/hgfs/txn"
)

// ManifestFile and StateFile are relative to .hg.
const (
	ManifestFile = "clonebundles.manifest"
	StateFile    = "clonebundles.s3state"
	// maxState bounds the state file read back.
	maxState = 4 << 20
)

// Attributes hgfs adds to its manifest lines besides hg's (lower case:
// hg leaves them to sites and ignores them): the object's size and
// SHA-256, which hgfs clone checks the download against.
const (
	AttrSize   = "hgfs-size"
	AttrSHA256 = "hgfs-sha256"
)

// Bundle is a bundle file to publish.
type Bundle struct {
	Path string
	// Kind names the object ("stream-v2", "packed1", "zstd-v2").
	Kind string
	// Spec is its BUNDLESPEC as 'hg debugbundle --spec' prints it.
	Spec string
	// Compression is its COMPRESSION attribute ("none", "zstd").
	Compression string
}

// Options of a refresh.
type Options struct {
	// Heads are the changesets (hex) every bundle holds: the manifest's
	// heads attribute and the first 12 digits of the first one in the
	// object names.
	Heads []string
	// Now is the refresh's time (zero: time.Now).
	Now time.Time
	// Grace is how long the objects of a replaced manifest stay in the
	// store (Config.Grace).
	Grace time.Duration
	// Log reports each step.
	Log func(format string, args ...any)
}

// state is StateFile's content.
type state struct {
	Current []stateObject `json:"current"`
	Retired []stateObject `json:"retired"`
}

type stateObject struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	// Since is when the object left the manifest (retired ones).
	Since time.Time `json:"since,omitzero"`
}

func readState(hgDir string) (*state, error) {
	path := filepath.Join(hgDir, StateFile)
	data, err := sysio.ReadFile(path, maxState)
	if errors.Is(err, fs.ErrNotExist) {
		return &state{}, nil
	}
	if err != nil {
		return nil, err
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %v (remove it to start afresh; the objects it lists are then left in the store)", path, err)
	}
	return &st, nil
}

// Entry is one manifest line.
type Entry struct {
	URL    string
	Bundle Bundle
	Object Object
	Heads  []string
}

// Line is the entry in hg's manifest format (clonebundles.py's
// manifest_line, plus COMPRESSION, heads and hgfs's attributes).
func (e Entry) Line() string {
	var b strings.Builder
	b.WriteString(e.URL)
	b.WriteString(" BUNDLESPEC=" + e.Bundle.Spec)
	if strings.HasPrefix(e.URL, "http") {
		b.WriteString(" REQUIRESNI=true")
	}
	if e.Bundle.Compression != "" {
		b.WriteString(" COMPRESSION=" + e.Bundle.Compression)
	}
	if len(e.Heads) > 0 {
		b.WriteString(" heads=" + strings.Join(e.Heads, ";"))
	}
	b.WriteString(" " + AttrSize + "=" + strconv.FormatInt(e.Object.Size, 10))
	b.WriteString(" " + AttrSHA256 + "=" + e.Object.SHA256)
	return b.String()
}

// ObjectName is a bundle's name in the store: the first head, the
// start of its SHA-256 (so the same bytes get the same name, and a
// refresh that is run again uploads nothing), and its kind.
func ObjectName(heads []string, sum, kind string) string {
	head := "empty"
	if len(heads) > 0 && len(heads[0]) >= 12 {
		head = heads[0][:12]
	}
	if len(sum) > 16 {
		sum = sum[:16]
	}
	return head + "-" + sum + "." + kind + ".hg"
}

// Objects is what a refresh asks of the object store (s3client.Store).
type Objects interface {
	// Upload puts the file at path, of the SHA-256 sum and size given,
	// as name under the target's prefix, unless an object of that
	// name, size and SHA-256 is there already.
	Upload(ctx context.Context, name, path, sum string, size int64) (Object, error)
	// URL is the address clients download key from.
	URL(ctx context.Context, key string) (string, error)
	// Remove deletes key; one already gone is not an error.
	Remove(ctx context.Context, key string) error
	// Target is where the store puts objects.
	Target() Target
}

// Refresh uploads bundles (in the order given, which is the manifest's)
// to s, replaces hgDir's manifest with them, and deletes the objects of
// earlier manifests retired for longer than the grace period. It returns
// the new manifest's entries.
func Refresh(ctx context.Context, s Objects, hgDir string, bundles []Bundle, opt Options) ([]Entry, error) {
	target := s.Target()
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	st, err := readState(hgDir)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	for _, b := range bundles {
		sum, size, err := FileSHA256(b.Path)
		if err != nil {
			return nil, err
		}
		name := ObjectName(opt.Heads, sum, b.Kind)
		logf("uploading %s (%d bytes) to %s\n", b.Kind, size, target.Bucket+"/"+target.Key(name))
		obj, err := s.Upload(ctx, name, b.Path, sum, size)
		if err != nil {
			return nil, err
		}
		u, err := s.URL(ctx, obj.Key)
		if err != nil {
			return nil, err
		}
		entries = append(entries, Entry{URL: u, Bundle: b, Object: obj, Heads: opt.Heads})
	}
	var manifest strings.Builder
	for _, e := range entries {
		manifest.WriteString(e.Line() + "\n")
	}
	if err := txn.WriteFileAtomic(filepath.Join(hgDir, ManifestFile), []byte(manifest.String())); err != nil {
		return nil, err
	}
	logf("wrote .hg/%s (%d entries)\n", ManifestFile, len(entries))

	// The previous manifest's objects start their grace period.
	listed := map[stateObject]bool{}
	next := &state{}
	for _, e := range entries {
		o := stateObject{Bucket: target.Bucket, Key: e.Object.Key}
		listed[o] = true
		next.Current = append(next.Current, o)
	}
	for _, o := range st.Current {
		if !listed[o] {
			o.Since = now
			st.Retired = append(st.Retired, o)
		}
	}
	var failed []error
	for _, o := range st.Retired {
		switch {
		case listed[stateObject{Bucket: o.Bucket, Key: o.Key}]:
			// Listed again: current, not retired.
		case o.Bucket != target.Bucket:
			logf("note: %s/%s is in another bucket; delete it there\n", o.Bucket, o.Key)
		case now.Sub(o.Since) < opt.Grace:
			next.Retired = append(next.Retired, o)
		default:
			logf("deleting %s/%s (unlisted since %s)\n", o.Bucket, o.Key, o.Since.UTC().Format(time.RFC3339))
			if err := s.Remove(ctx, o.Key); err != nil {
				// Kept for the next refresh to try again.
				failed = append(failed, err)
				next.Retired = append(next.Retired, o)
			}
		}
	}
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := txn.WriteFileAtomic(filepath.Join(hgDir, StateFile), append(data, '\n')); err != nil {
		return nil, err
	}
	return entries, errors.Join(failed...)
}

// Pending lists, for a dry run, the retired objects a refresh at now
// would delete and those it would keep.
func Pending(hgDir string, grace time.Duration, now time.Time) (due, kept []string, err error) {
	st, err := readState(hgDir)
	if err != nil {
		return nil, nil, err
	}
	for _, o := range st.Retired {
		if now.Sub(o.Since) >= grace {
			due = append(due, o.Bucket+"/"+o.Key)
		} else {
			kept = append(kept, o.Bucket+"/"+o.Key)
		}
	}
	for _, o := range st.Current {
		kept = append(kept, o.Bucket+"/"+o.Key+" (listed now)")
	}
	return due, kept, nil
}
