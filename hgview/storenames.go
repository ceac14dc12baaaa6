package hgview

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// dataNames finds the on-disk name of a revlog's data (.d) file from the
// on-disk name of its index, which revlogs/STOREPATH gives. Swapping the
// suffix is right for every encoding but the hashed one: a path too long
// for fncache's encoding is stored as dh/PREFIX...DIGEST.i, the digest
// covering the whole logical name, suffix included, so the .d of the
// same revlog has another digest. Its name comes from the fncache, which
// lists logical names: encoding each .i of it that hashes gives the map
// from encoded index names back to their revlogs, from which the .d is
// encoded. The map is rebuilt when the fncache changes (a commit or pull
// adding files).
type dataNames struct {
	st *store.Store

	mu  sync.Mutex
	key fileKey
	d   map[string]string // encoded dh/...i -> encoded .d
}

// data returns the on-disk data file name of the revlog whose index is
// stored as index; "" means the suffix swap (revlog.Open's default).
func (dn *dataNames) data(index string) (string, error) {
	if !strings.HasPrefix(index, "dh/") {
		return "", nil
	}
	key := statKey(dn.st.FS(), "fncache")
	dn.mu.Lock()
	defer dn.mu.Unlock()
	if dn.d == nil || dn.key != key {
		names, err := dn.st.Fncache()
		if err != nil {
			return "", err
		}
		m := map[string]string{}
		for _, name := range names {
			base, ok := strings.CutSuffix(name, ".i")
			if !ok {
				continue
			}
			if enc := dn.st.Encode(name); strings.HasPrefix(enc, "dh/") {
				m[enc] = dn.st.Encode(base + ".d")
			}
		}
		dn.d, dn.key = m, key
	}
	d, ok := dn.d[index]
	if !ok {
		// Not in the fncache: an inline revlog needs no data file, and
		// a split one will say it is missing when first read.
		return "", nil
	}
	return d, nil
}

// openRevlog opens a store revlog by the on-disk path of its index,
// with its data file's on-disk name (see dataNames). The caller closes.
func (v *View) openRevlog(p string) (*revlog.Revlog, error) {
	data, err := v.names.data(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return v.openRevlogData(p, data)
}

// openRevlogData opens a revlog whose index and data names (on disk,
// "" for the default data name) are known.
func (v *View) openRevlogData(index, data string) (*revlog.Revlog, error) {
	rl, err := revlog.OpenWithData(v.st, index, data)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, syscall.ENOENT
	}
	return rl, err
}
