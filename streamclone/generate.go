package streamclone

// Generating streams from a local store (for local clones, bundle files
// and the server). Locking is the caller's business: hg takes the
// repository lock while it lists the files and records their sizes, then
// streams without it. Generate* here take that snapshot (store.WalkRead:
// sizes, and the content of small files read at once) first and send
// exactly the recorded number of bytes per file: a
// revlog appended to meanwhile is cut at the recorded size (its index
// still describes a consistent prefix, as hg relies on), a file that
// shrank is an error.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/store"
)

const (
	srcStore = 's' // keep in sync with mercurial/streamclone.py _srcstore
	srcCache = 'c' // _srccache
)

type genEntry struct {
	src  byte
	name string // name in the stream (unencoded store path or cache name)
	dir  string // store or cache directory
	rel  string // path on disk relative to dir
	size int64
	data []byte // the content, read with the snapshot (nil: read when sent)
}

// snapshotReadBudget bounds what a snapshot reads of small files while
// it records sizes (store.WalkRead): for a store of many small files,
// opening and reading each under the lock costs less than stat'ing it
// there and reading it afterwards, and the bytes are then those of the
// moment the size was taken. Per stream, until it is sent.
const snapshotReadBudget = 16 << 20

// path is the file's path on disk.
func (e *genEntry) path() string { return filepath.Join(e.dir, e.rel) }

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
	files, err := st.WalkRead(snapshotReadBudget)
	if err != nil {
		return nil, 0, fmt.Errorf("listing store files: %w", err)
	}
	out := make([]genEntry, 0, len(files)+4) // + SnapshotFiles
	var total int64
	for _, f := range files {
		if f.Name == "phaseroots" || f.Name == "obsstore" || f.Size <= 0 {
			continue
		}
		out = append(out, genEntry{src: srcStore, name: f.Name, dir: st.Dir, rel: filepath.FromSlash(f.Path), size: f.Size, data: f.Data})
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
		out = append(out, genEntry{src: srcStore, name: f.Name, dir: st.Dir, rel: filepath.FromSlash(f.Path), size: f.Size})
		total += f.Size
	}
	if !opt.NoCaches {
		caches, err := st.CacheFiles()
		if err != nil {
			return nil, 0, fmt.Errorf("listing cache files: %w", err)
		}
		for _, f := range caches {
			// Read now, as hg copies volatile files under the lock, and
			// through readRegular: a cache directory may hold anything,
			// and nothing but its regular files may leave it.
			e := genEntry{src: srcCache, name: f.Name, dir: st.CacheDir, rel: filepath.FromSlash(f.Path), size: f.Size}
			data, err := readRegular(e.path(), f.Size)
			if err != nil {
				return nil, 0, fmt.Errorf("reading cache files: %w", err)
			}
			if int64(len(data)) != f.Size {
				return nil, 0, fmt.Errorf("clone could only read %d bytes from %s, but expected %d bytes", len(data), f.Name, f.Size)
			}
			e.data = data
			out = append(out, e)
			total += f.Size
		}
	}
	return out, total, nil
}

// streamedRequirements are the source requirements a clone must share
// (streamclone.streamed_requirements), sorted.
func streamedRequirements(st *store.Store) []string {
	return st.Requirements.Streamed().List()
}

func writeV1Entries(ctx context.Context, entries []genEntry, w io.Writer) error {
	r := newEntryReader(ctx, entries, prefetchReaders)
	defer r.close()
	var hdr []byte
	for i := range entries {
		e := &entries[i]
		hdr = append(hdr[:0], store.EncodeDir(e.name)...)
		hdr = append(hdr, 0)
		hdr = strconv.AppendInt(hdr, e.size, 10)
		hdr = append(hdr, '\n')
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		if err := r.copy(e, w); err != nil {
			return err
		}
	}
	return nil
}

// GenerateV1 writes a stream_out response body with status "0" (what
// generatev1wireproto sends when streaming is allowed). A server refusing
// writes "1\n" itself; one that cannot lock writes "2\n".
func GenerateV1(ctx context.Context, st *store.Store, w io.Writer) error {
	s, err := PrepareV1(st)
	if err != nil {
		return err
	}
	return s.Write(ctx, w)
}

// V1Stream is a stream_out body whose snapshot is taken: its length is
// known before anything is sent, so a server can send it with a
// Content-Length (and then copy large files with sendfile).
type V1Stream struct {
	entries []genEntry
	total   int64
}

// PrepareV1 takes the snapshot of a stream_out body (the caller holds the
// lock, if any, while it runs).
func PrepareV1(st *store.Store) (*V1Stream, error) {
	entries, total, err := v1Snapshot(st)
	if err != nil {
		return nil, err
	}
	return &V1Stream{entries: entries, total: total}, nil
}

func (s *V1Stream) header() string { return fmt.Sprintf("0\n%d %d\n", len(s.entries), s.total) }

// Len is the number of bytes Write writes.
func (s *V1Stream) Len() int64 {
	n := int64(len(s.header()))
	for i := range s.entries {
		e := &s.entries[i]
		n += int64(len(store.EncodeDir(e.name))+len(strconv.FormatInt(e.size, 10))+2) + e.size
	}
	return n
}

// Write writes the body: Len bytes, or an error. When w is an
// io.ReaderFrom (a buffered HTTP response), large files are handed to its
// ReadFrom, which may send them with sendfile(2).
func (s *V1Stream) Write(ctx context.Context, w io.Writer) error {
	if _, err := io.WriteString(w, s.header()); err != nil {
		return err
	}
	return writeV1Entries(ctx, s.entries, w)
}

// GenerateV2 writes a complete uncompressed bundle2 stream holding one
// stream2 part, as `hg bundle -a -t 'none-v2;stream=v2'` writes for a
// non-publishing repository (phaseroots, obsstore and caches included).
func GenerateV2(ctx context.Context, st *store.Store, w io.Writer) error {
	return GenerateV2With(ctx, st, w, GenerateOptions{ObsMarkers: true})
}

// GenerateV2With is GenerateV2 with options.
func GenerateV2With(ctx context.Context, st *store.Store, w io.Writer, opt GenerateOptions) error {
	bw, err := bundle2.NewWriter(w)
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
func WriteStream2Part(ctx context.Context, bw *bundle2.Writer, st *store.Store, opt GenerateOptions) error {
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
	pw, err := bw.NewPart("stream2", true, []bundle2.Param{
		{Name: "bytecount", Value: strconv.FormatInt(total, 10)},
		{Name: "filecount", Value: strconv.Itoa(len(entries))},
		{Name: "requirements", Value: bundle2.Quote(reqs)}}, nil)
	if err != nil {
		return err
	}
	r := newEntryReader(ctx, entries, prefetchReaders)
	defer r.close()
	var hdr []byte
	for i := range entries {
		e := &entries[i]
		hdr = append(hdr[:0], e.src)
		hdr = binary.AppendUvarint(hdr, uint64(len(e.name)))
		hdr = binary.AppendUvarint(hdr, uint64(e.size))
		hdr = append(hdr, e.name...)
		if _, err := pw.Write(hdr); err != nil {
			return err
		}
		if err := r.copy(e, pw); err != nil {
			return err
		}
	}
	return pw.Close()
}
