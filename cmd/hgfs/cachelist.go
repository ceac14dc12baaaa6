package main

// hgfs cache list, rm and prune.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hgfs/hgfs/fsnode"
	"github.com/hgfs/hgfs/mount"
)

// cacheEntry is one cache as "hgfs cache list" shows it.
type cacheEntry struct {
	Path      string    `json:"path"`
	Source    string    `json:"source"`
	DiskBytes int64     `json:"disk_bytes"`
	LiveBytes *int64    `json:"live_bytes"` // nil: unknown (see Problem)
	MountedAt []string  `json:"mounted_at"`
	LastUsed  time.Time `json:"last_used"`
	Problem   string    `json:"problem,omitempty"`
}

// isCacheDir reports whether dir holds an hgfs cache (fsnode's index).
func isCacheDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "index.db"))
	return err == nil && fi.Mode().IsRegular()
}

// cachePath is the directory a CACHE argument names: a path, or, for a
// bare name that names nothing in the current directory, the cache of
// that name in the cache directory (the last element of the paths
// hgfs cache list prints).
func cachePath(c *cmdContext, arg string) (string, error) {
	d := c.abs(arg)
	if strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator) {
		return d, nil
	}
	if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	base, err := cacheBase(c.ui.cfg)
	if err != nil {
		return "", err
	}
	return filepath.Join(base, arg), nil
}

// cacheDirs lists the caches in the cache directory, sorted.
func cacheDirs(c *cmdContext) ([]string, error) {
	base, err := cacheBase(c.ui.cfg)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, abortf("%s: %v", base, errorsCause(err))
	}
	var out []string
	for _, e := range ents {
		if d := filepath.Join(base, e.Name()); e.IsDir() && isCacheDir(d) {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out, nil
}

// mountsByCache maps each mounted cache directory to its mountpoints.
func mountsByCache() map[string][]string {
	ms, _ := mount.Mounts() // no table: nothing shows as mounted
	out := map[string][]string{}
	for _, m := range ms {
		out[m.Source] = append(out[m.Source], m.Mountpoint)
	}
	return out
}

// describeCache gathers dir's entry: the live size from the mount's
// stats when it is mounted, else from the cache itself.
func describeCache(c *cmdContext, dir string, mounts map[string][]string) cacheEntry {
	e := cacheEntry{Path: dir, MountedAt: mounts[dir]}
	if e.MountedAt == nil {
		e.MountedAt = []string{}
	}
	meta, err := readCacheMeta(dir)
	if err != nil {
		e.Problem = err.Error()
	}
	e.Source, e.LastUsed = meta.Source, meta.LastUsed
	if fi, err := os.Stat(filepath.Join(dir, "index.db")); err == nil && fi.ModTime().After(e.LastUsed) {
		e.LastUsed = fi.ModTime()
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				e.DiskBytes += fi.Size()
			}
		}
		return nil
	})
	if len(e.MountedAt) > 0 {
		if info, err := mount.ReadInfo(e.MountedAt[0]); err == nil && info.Stats != nil {
			e.LiveBytes = &info.Stats.LiveBytes
		} else if err != nil {
			e.Problem = fmt.Sprintf("mount %s: %v", e.MountedAt[0], errorsCause(err))
		}
		return e
	}
	opt, err := cacheOptions(c.ui.cfg)
	if err != nil {
		e.Problem = err.Error()
		return e
	}
	opt.AutoCompact = false
	opt.LockTimeout = 100 * time.Millisecond
	// Opening the cache writes its index; a listing is no use of it, so
	// the index's time (what prune goes by without a record) is put back.
	index := filepath.Join(dir, "index.db")
	if fi, err := os.Stat(index); err == nil {
		defer os.Chtimes(index, time.Time{}, fi.ModTime())
	}
	fsys, err := fsnode.Open(dir, opt)
	if err != nil {
		if a := unfinishedClone(dir, err); a != nil {
			e.Problem = a.Error()
		} else {
			e.Problem = err.Error()
		}
		return e
	}
	live := fsys.Stats().LiveBytes
	e.LiveBytes = &live
	if err := fsys.Close(); err != nil {
		e.Problem = err.Error()
	}
	return e
}

func cacheList(c *cmdContext, args []string) error {
	switch t := c.opts.String("template"); t {
	case "", "json":
	default:
		return abortf("hgfs cache list: template %q is not supported", t).withHint("-T json lists the caches as JSON")
	}
	dirs := make([]string, 0, len(args))
	for _, a := range args {
		d, err := cachePath(c, a)
		if err != nil {
			return err
		}
		if !isCacheDir(d) {
			return abortf("%s is not an hgfs cache", a)
		}
		dirs = append(dirs, d)
	}
	if len(args) == 0 {
		var err error
		if dirs, err = cacheDirs(c); err != nil {
			return err
		}
	}
	mounts := mountsByCache()
	entries := make([]cacheEntry, 0, len(dirs))
	for _, d := range dirs {
		entries = append(entries, describeCache(c, d, mounts))
	}
	if c.opts.String("template") == "json" {
		b, err := json.MarshalIndent(entries, "", " ")
		if err != nil {
			return err
		}
		c.ui.write("%s\n", b)
		return nil
	}
	for i, e := range entries {
		if i > 0 {
			c.ui.write("\n")
		}
		c.ui.write("%s\n", e.Path)
		src := e.Source
		if src == "" {
			src = "(not recorded)"
		}
		c.ui.write("  source:       %s\n", src)
		c.ui.write("  size on disk: %s\n", formatBytes(float64(e.DiskBytes)))
		if e.LiveBytes != nil {
			c.ui.write("  live data:    %s\n", formatBytes(float64(*e.LiveBytes)))
		}
		if len(e.MountedAt) > 0 {
			c.ui.write("  mounted at:   %s\n", strings.Join(e.MountedAt, ", "))
		} else {
			c.ui.write("  mounted at:   (not mounted; last used %s)\n", e.LastUsed.Local().Format("2006-01-02 15:04"))
		}
		if e.Problem != "" {
			c.ui.write("  problem:      %s\n", e.Problem)
		}
	}
	return nil
}

// removeCache deletes the cache dir unless it is mounted (or locked by
// a process that has it open).
func removeCacheDir(c *cmdContext, dir, name string, mounts map[string][]string) error {
	if !isCacheDir(dir) {
		return abortf("%s is not an hgfs cache", name)
	}
	if mps := mounts[dir]; len(mps) > 0 {
		return abortf("cache %s is mounted at %s", name, strings.Join(mps, ", ")).withHint("unmount it first (hgfs unmount %s)", mps[0])
	}
	// Opening takes the cache's lock: a process using it (an fsck, a
	// gc, a mount in another namespace) makes this fail.
	opt, err := cacheOptions(c.ui.cfg)
	if err != nil {
		return err
	}
	opt.AutoCompact = false
	opt.LockTimeout = 100 * time.Millisecond
	if fsys, err := fsnode.Open(dir, opt); err == nil {
		if err := fsys.Close(); err != nil {
			return abortf("cache %s: %v", name, err)
		}
	} else if strings.Contains(err.Error(), "in use") {
		return abortf("cache %s: %v", name, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return abortf("removing cache %s: %v", name, errorsCause(err))
	}
	return nil
}

func cacheRemove(c *cmdContext, args []string) error {
	mounts := mountsByCache()
	for _, a := range args {
		d, err := cachePath(c, a)
		if err != nil {
			return err
		}
		if err := removeCacheDir(c, d, a, mounts); err != nil {
			return err
		}
		c.ui.status("removed %s\n", a)
	}
	return nil
}

// parseAge is a duration as Go writes them (90m, 720h), or whole days
// (30d).
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return d, nil
}

func cachePrune(c *cmdContext) error {
	if !c.opts.Changed("unused-for") {
		return abortf("hgfs cache prune needs --unused-for DURATION").withHint("such as --unused-for 30d; hgfs cache list shows when each cache was last used")
	}
	age, err := parseAge(c.opts.String("unused-for"))
	if err != nil {
		return abortf("%v", err).withHint("a duration such as 90m, 720h or 30d")
	}
	dirs, err := cacheDirs(c)
	if err != nil {
		return err
	}
	mounts := mountsByCache()
	cutoff := time.Now().Add(-age)
	for _, d := range dirs {
		if len(mounts[d]) > 0 {
			continue
		}
		meta, _ := readCacheMeta(d)
		last := meta.LastUsed
		if fi, err := os.Stat(filepath.Join(d, "index.db")); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
		if last.After(cutoff) {
			continue
		}
		if c.opts.Bool("dry-run") {
			c.ui.write("would remove %s (last used %s)\n", d, last.Local().Format("2006-01-02 15:04"))
			continue
		}
		if err := removeCacheDir(c, d, d, mounts); err != nil {
			return err
		}
		c.ui.status("removed %s (last used %s)\n", d, last.Local().Format("2006-01-02 15:04"))
	}
	return nil
}
