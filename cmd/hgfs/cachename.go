package main

// Cache directories: the default name of a new one, and the small record
// hgfs keeps in each (cacheMetaName) of where it came from and when and
// where it was last mounted, which "hgfs cache list" and "hgfs cache
// prune" read. fsnode ignores files that are not its own.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/streamclone"
)

// cacheMetaName is the record's file in a cache directory.
const cacheMetaName = "hgfs-cache.json"

// maxCacheMeta bounds what is read of a record (it is a few hundred
// bytes; a cache directory is not trusted to hold a sane one).
const maxCacheMeta = 64 << 10

// cacheMeta is the record.
type cacheMeta struct {
	Source     string    `json:"source,omitempty"`     // what the cache was cloned from
	Mountpoint string    `json:"mountpoint,omitempty"` // where it was last mounted
	Created    time.Time `json:"created,omitzero"`
	LastUsed   time.Time `json:"last_used,omitzero"` // last mounted or unmounted
}

// cacheBase is the directory new caches go in by default: [hgfs] cache,
// else hgfs under the user's cache directory ($XDG_CACHE_HOME).
func cacheBase(cfg *configSet) (string, error) {
	if base := cfg.Get(config.HgfsCache); base != "" {
		return base, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", abortf("no cache directory: %v", err).withHint("use --cache DIR or set [hgfs] cache")
	}
	return filepath.Join(d, "hgfs"), nil
}

// defaultCacheDir names a new cache for a clone of source mounted at
// mountpoint: NAME-HASH under cacheBase, NAME the mountpoint's base name
// and HASH one of the source and the mountpoint, so that two sources
// never share a name. When that directory already holds a cache (an
// earlier clone to the same place, unmounted), the first free NAME-HASH-N
// is taken: cloning again works, and the old cache stays for "hgfs cache
// rm".
func defaultCacheDir(cfg *configSet, source, mountpoint string) (string, error) {
	base, err := cacheBase(cfg)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(source + "\x00" + mountpoint))
	name := filepath.Join(base, filepath.Base(mountpoint)+"-"+hex.EncodeToString(sum[:4]))
	for i := 1; i <= 1000; i++ {
		dir := name
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", name, i)
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) || err == nil && streamclone.CheckDest(dir) == nil {
			return dir, nil
		}
	}
	return "", abortf("no free cache name like %s", name).withHint("remove old caches (hgfs cache list, hgfs cache rm) or use --cache DIR")
}

// readCacheMeta reads dir's record; a cache without one (made by an
// older hgfs, or by hgfs mount) has the zero record.
func readCacheMeta(dir string) (cacheMeta, error) {
	var m cacheMeta
	path := filepath.Join(dir, cacheMetaName)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if fi.Size() > maxCacheMeta {
		return m, fmt.Errorf("%s: %d bytes, too large", path, fi.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return cacheMeta{}, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// updateCacheMeta changes dir's record with fn and writes it back
// atomically.
func updateCacheMeta(dir string, fn func(*cacheMeta)) error {
	m, err := readCacheMeta(dir)
	if err != nil {
		m = cacheMeta{} // a damaged record is replaced
	}
	fn(&m)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, cacheMetaName+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, cacheMetaName))
}

// noteCacheUse records that dir is used now: mounted at mountpoint, or
// unmounted (""); a failure is only a warning, as the record only
// informs listings.
func noteCacheUse(u *ui, dir, mountpoint string) {
	err := updateCacheMeta(dir, func(m *cacheMeta) {
		now := time.Now()
		if m.Created.IsZero() {
			m.Created = now
		}
		m.LastUsed = now
		if mountpoint != "" {
			m.Mountpoint = mountpoint
		}
	})
	if err != nil {
		u.warn("hgfs: recording the use of cache %s: %v\n", dir, err)
	}
}
