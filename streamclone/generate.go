package streamclone

// Generating streams from a local store (for local clones, bundle files
// and the server). Locking is the caller's business: hg takes the
// repository lock while it lists the files and records their sizes, then
// streams without it. Generate* here take that snapshot (store.Walk's
// sizes) first and send exactly the recorded number of bytes per file: a
// revlog appended to meanwhile is cut at the recorded size (its index
// still describes a consistent prefix, as hg relies on), a file that
// shrank is an error.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/hgfs/hgfs/store"
)

const (
	srcStore = 's' // keep in sync with mercurial/streamclone.py _srcstore
	srcCache = 'c' // _srccache
)

type genEntry struct {
	src  byte
	name string // name in the stream (unencoded store path or cache name)
	path string // absolute path on disk
	size int64
}

// GenerateOptions select the optional content of a v2 stream.
type GenerateOptions struct {
	// Publishing is the source's phases.publish: a publishing repository
	// does not stream phaseroots, so every changeset is public in the
	// clone (streamclone._walkstreamfullstorefiles).
	Publishing bool
	// ObsMarkers includes the obsstore (hg does when the client supports
	// its format version).
	ObsMarkers bool
	// NoCaches leaves out the .hg/cache files.
	NoCaches bool
}

// revlogSnapshot lists the store's revlogs with their current sizes,
// without the "full" files (phaseroots, obsstore) handled separately.
func revlogSnapshot(st *store.Store) ([]genEntry, int64, error) {
	files, err := st.Walk()
	if err != nil {
		return nil, 0, fmt.Errorf("listing store files: %w", err)
	}
	var out []genEntry
	var total int64
	for _, f := range files {
		if f.Name == "phaseroots" || f.Name == "obsstore" || f.Size <= 0 {
			continue
		}
		out = append(out, genEntry{src: srcStore, name: f.Name, path: filepath.Join(st.Dir, filepath.FromSlash(f.Path)), size: f.Size})
		total += f.Size
	}
	return out, total, nil
}

func v1Snapshot(st *store.Store) ([]genEntry, int64, error) { return revlogSnapshot(st) }

func v2Snapshot(st *store.Store, opt GenerateOptions) ([]genEntry, int64, error) {
	out, total, err := revlogSnapshot(st)
	if err != nil {
		return nil, 0, err
	}
	full, err := st.SnapshotFiles(opt.Publishing, opt.ObsMarkers)
	if err != nil {
		return nil, 0, fmt.Errorf("listing store files: %w", err)
	}
	for _, f := range full {
		out = append(out, genEntry{src: srcStore, name: f.Name, path: filepath.Join(st.Dir, filepath.FromSlash(f.Path)), size: f.Size})
		total += f.Size
	}
	if !opt.NoCaches {
		caches, err := st.CacheFiles()
		if err != nil {
			return nil, 0, fmt.Errorf("listing cache files: %w", err)
		}
		for _, f := range caches {
			out = append(out, genEntry{src: srcCache, name: f.Name, path: filepath.Join(st.CacheDir, filepath.FromSlash(f.Path)), size: f.Size})
			total += f.Size
		}
	}
	return out, total, nil
}

// streamedRequirements are the source requirements a clone must share
// (streamclone.streamed_requirements), sorted.
func streamedRequirements(st *store.Store) []string {
	var out []string
	for _, r := range st.Requirements.List() {
		if streamFixed(r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// copyEntry writes exactly e.size bytes of e's file to w.
func copyEntry(ctx context.Context, e genEntry, w io.Writer, buf []byte) error {
	f, err := store.OpenRead(e.path)
	if err != nil {
		return err
	}
	defer f.Close()
	var n int64
	for n < e.size {
		if err := ctx.Err(); err != nil {
			return err
		}
		want := int64(len(buf))
		if e.size-n < want {
			want = e.size - n
		}
		k, err := io.ReadFull(f, buf[:want])
		n += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			// streamclone._emit2: "Would most likely be caused by a race
			// due to `hg strip` or a revlog split"
			return fmt.Errorf("clone could only read %d bytes from %s, but expected %d bytes", n, e.name, e.size)
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
	}
	return nil
}

func writeV1Entries(ctx context.Context, st *store.Store, entries []genEntry, w io.Writer) error {
	buf := make([]byte, copyBufSize)
	for _, e := range entries {
		if _, err := fmt.Fprintf(w, "%s\x00%d\n", store.EncodeDir(e.name), e.size); err != nil {
			return err
		}
		if err := copyEntry(ctx, e, w, buf); err != nil {
			return err
		}
	}
	return nil
}

// GenerateV1 writes a stream_out response body with status "0" (what
// generatev1wireproto sends when streaming is allowed). A server refusing
// writes "1\n" itself; one that cannot lock writes "2\n".
func GenerateV1(ctx context.Context, st *store.Store, w io.Writer) error {
	entries, total, err := v1Snapshot(st)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "0\n%d %d\n", len(entries), total); err != nil {
		return err
	}
	return writeV1Entries(ctx, st, entries, w)
}

// GenerateV2 writes a complete uncompressed bundle2 stream holding one
// stream2 part, as `hg bundle -a -t 'none-v2;stream=v2'` writes for a
// non-publishing repository (phaseroots, obsstore and caches included).
func GenerateV2(ctx context.Context, st *store.Store, w io.Writer) error {
	return GenerateV2With(ctx, st, w, GenerateOptions{ObsMarkers: true})
}

// GenerateV2With is GenerateV2 with options.
func GenerateV2With(ctx context.Context, st *store.Store, w io.Writer, opt GenerateOptions) error {
	bw, err := NewBundle2Writer(w)
	if err != nil {
		return err
	}
	if err := WriteStream2Part(ctx, bw, st, opt); err != nil {
		return err
	}
	return bw.Close()
}

// WriteStream2Part writes a stream2 part into a bundle2 stream, for a
// server composing a getbundle reply (stream2, then bookmarks/listkeys).
func WriteStream2Part(ctx context.Context, bw *Bundle2Writer, st *store.Store, opt GenerateOptions) error {
	entries, total, err := v2Snapshot(st, opt)
	if err != nil {
		return err
	}
	reqs := ""
	for i, r := range streamedRequirements(st) {
		if i > 0 {
			reqs += ","
		}
		reqs += r
	}
	// Parameter order as bundle2.addpartbundlestream2 adds them.
	pw, err := bw.NewPart("stream2", true, []Param{
		{"bytecount", strconv.FormatInt(total, 10)},
		{"filecount", strconv.Itoa(len(entries))},
		{"requirements", Quote(reqs)},
	}, nil)
	if err != nil {
		return err
	}
	buf := make([]byte, copyBufSize)
	var hdr []byte
	for _, e := range entries {
		hdr = append(hdr[:0], e.src)
		hdr = binary.AppendUvarint(hdr, uint64(len(e.name)))
		hdr = binary.AppendUvarint(hdr, uint64(e.size))
		hdr = append(hdr, e.name...)
		if _, err := pw.Write(hdr); err != nil {
			return err
		}
		if err := copyEntry(ctx, e, pw, buf); err != nil {
			return err
		}
	}
	return pw.Close()
}
