package fsnode

// Fsck: a full consistency check of a closed cache, index against data
// files, with optional repair.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Problem is one inconsistency Fsck found.
type Problem struct {
	Path     string // path of the inode or entry, or "inode N" if unreachable
	Ino      Ino
	What     string
	Repaired bool
	// Damaged: file contents do not match their checksum. Repair cannot
	// restore them: the file is left as it is (its reads of the damaged
	// run fail with EIO), to be restored from elsewhere or removed.
	Damaged bool
}

func (p Problem) String() string {
	s := p.Path + ": " + p.What
	if p.Repaired {
		s += " (repaired)"
	}
	return s
}

// FsckReport is what Fsck found.
type FsckReport struct {
	Inodes, Dirs, Files, Symlinks int
	Special                       int // FIFOs, sockets and devices
	DataFiles                     int
	DataBytes                     int64 // committed lengths of the data files
	LiveBytes                     int64 // bytes extents refer to
	GarbageBytes                  int64 // data file bytes past committed lengths (cut on Open)
	Orphans                       int   // unlinked-while-open inodes (reclaimed on Open or repair)
	Damaged                       int   // extents whose contents fail their checksum
	Problems                      []Problem
	// Virtual lists the virtual files whose records are sound, for a
	// caller that can resolve their references (hgfs fsck checks each
	// against the repository), deferred ones (Ino 0) included.
	Virtual []VirtualFile
	// Deferred counts the files of sound deferred listings (vdir.go),
	// which are not inodes yet.
	Deferred int
}

// VirtualFile is a virtual file's record as Fsck found it.
type VirtualFile struct {
	Path string
	Ino  Ino
	Size uint64
	Ref  VirtualRef
}

// OK reports whether no problem was found.
func (r *FsckReport) OK() bool { return len(r.Problems) == 0 }

func (r *FsckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d inodes (%d dirs, %d files, %d symlinks), %d data files, %d of %d data bytes live, %d orphans, %d problems\n",
		r.Inodes, r.Dirs, r.Files, r.Symlinks, r.DataFiles, r.LiveBytes, r.DataBytes, r.Orphans, len(r.Problems))
	for _, p := range r.Problems {
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	return b.String()
}

type fsckDirent struct {
	parent Ino
	name   string
	d      diskDirent
	key    []byte
}

type fsck struct {
	r       *FsckReport
	tx      *bolt.Tx
	repair  bool
	inodes  map[Ino]*diskInode
	paths   map[Ino]string
	dirents []fsckDirent
	files   map[uint32]int64 // committed lengths
	sizes   map[uint32]int64 // actual sizes
	// fixes run inside the write transaction when repairing.
	fixes []func(*bolt.Tx) error
	// version is the cache's format version; checksums are verified
	// from version 2 on (verified: runs checked so far, open: data files).
	version  uint32
	dir      string
	verified map[runKey]error
	open     map[uint32]*os.File
}

func (c *fsck) problem(path string, ino Ino, fix func(*bolt.Tx) error, format string, args ...any) {
	p := Problem{Path: path, Ino: ino, What: fmt.Sprintf(format, args...)}
	if c.repair && fix != nil {
		c.fixes = append(c.fixes, fix)
		p.Repaired = true
	}
	c.r.Problems = append(c.r.Problems, p)
}

func (c *fsck) path(ino Ino) string {
	if p, ok := c.paths[ino]; ok {
		return p
	}
	return fmt.Sprintf("inode %d", ino)
}

func putInodeFix(ino Ino, d diskInode) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error { return tx.Bucket(bucketInodes).Put(inoKey(ino), encodeInode(&d)) }
}

func deleteKeyFix(bucket, key []byte) func(*bolt.Tx) error {
	key = bytes.Clone(key)
	return func(tx *bolt.Tx) error { return tx.Bucket(bucket).Delete(key) }
}

// Fsck checks the cache in dir, which must not be open: the index file's
// structure (every page bbolt would read, see boltcheck.go); every record
// decodes; extents lie within their data files' committed lengths; every
// directory entry names an existing inode of the recorded type under an
// existing directory; link counts match the entries; the tree from the
// root is acyclic with each directory named once; every inode is reachable
// (orphans excepted); inline sizes match; every extent's run matches its
// CRC32C (damaged contents are reported by path, Problem.Damaged, and
// never repaired). A version 1 cache is checked in its own layout, or
// upgraded first with repair. With repair, it fixes what it can: an
// index file bbolt cannot read safely is rebuilt from its readable
// records (the old one kept as index.db.damaged); then it drops dangling
// entries and bad extents, fixes link counts, sizes and counters,
// reclaims orphans and unreachable inodes, deletes stray records and
// unlisted data files. Repair runs its checks again until a pass finds
// nothing more to fix, so that a second Fsck is clean; problems it
// cannot fix are in the report with Repaired false.
func Fsck(dir string, repair bool) (*FsckReport, error) {
	path := filepath.Join(dir, indexName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotCache, dir, err)
	}
	rep := &FsckReport{}
	damage, err := indexDamage(path)
	if err != nil {
		return nil, err
	}
	rebuilt, counted := false, false
	if len(damage) > 0 {
		if !repair {
			for _, d := range damage {
				rep.Problems = append(rep.Problems, Problem{Path: indexName, What: d})
			}
			return previewRebuild(dir, rep), nil
		}
		salvaged, err := rebuildIndex(dir)
		for _, d := range damage {
			rep.Problems = append(rep.Problems, Problem{Path: indexName, What: d, Repaired: err == nil})
		}
		if err != nil {
			return rep, fmt.Errorf("fsnode: fsck %s: rebuilding the index: %w", dir, err)
		}
		rebuilt = true
		rep.Problems = append(rep.Problems, Problem{Path: indexName, Repaired: true,
			What: fmt.Sprintf("index rebuilt from its %d readable records; the damaged file is kept as %s.damaged", salvaged, indexName)})
	}
	ver, err := fsckVersion(dir, repair)
	if err != nil {
		return rep, err
	}
	// Each repair can uncover more (an entry dropped leaves its inode
	// unreachable, ...): repeat until a pass has nothing to fix.
	const maxPasses = 8
	for pass := 0; ; pass++ {
		r, applied, err := fsckPass(dir, repair, ver)
		var pe *panicError
		if errors.As(err, &pe) {
			// bbolt itself failed on the file: not a record problem.
			if repair && !rebuilt {
				salvaged, rerr := rebuildIndex(dir)
				rep.Problems = append(rep.Problems, Problem{Path: indexName, What: pe.Error(), Repaired: rerr == nil})
				if rerr != nil {
					return rep, fmt.Errorf("fsnode: fsck %s: rebuilding the index: %w", dir, rerr)
				}
				rebuilt = true
				rep.Problems = append(rep.Problems, Problem{Path: indexName, Repaired: true,
					What: fmt.Sprintf("index rebuilt from its %d readable records; the damaged file is kept as %s.damaged", salvaged, indexName)})
				continue
			}
			rep.Problems = append(rep.Problems, Problem{Path: indexName, What: pe.Error()})
			return rep, nil
		}
		if err != nil {
			return rep, err
		}
		if !counted {
			counted = true
			probs := rep.Problems
			*rep = *r
			rep.Problems = probs
		}
		if !repair || applied == 0 {
			// Nothing was fixed in this pass: what it found stays.
			rep.Problems = append(rep.Problems, r.Problems...)
			return rep, nil
		}
		for _, p := range r.Problems {
			if p.Repaired {
				rep.Problems = append(rep.Problems, p)
			}
		}
		if pass+1 == maxPasses {
			r, _, err := fsckPass(dir, false, ver)
			if err != nil {
				return rep, err
			}
			for _, p := range r.Problems {
				p.What += fmt.Sprintf(" (still there after %d repair passes)", maxPasses)
				rep.Problems = append(rep.Problems, p)
			}
			return rep, nil
		}
	}
}

// rebuildIndex copies every record that can be read from the damaged
// index (a bounds-checked walk of the file, see boltcheck.go) into a fresh
// bbolt file and puts it in place of index.db, which is kept as
// index.db.damaged. Data files the salvaged index does not list are listed
// again with their current size, so that the record checks that follow
// keep the extents that point into them. It returns how many records were
// copied.
func rebuildIndex(dir string) (int, error) {
	path := filepath.Join(dir, indexName)
	tmp := path + ".rebuild"
	n, err := salvageIndex(dir, tmp)
	if err != nil {
		return 0, err
	}
	if err := os.Rename(path, path+".damaged"); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return 0, err
	}
	return n, syncDir(dir)
}

// previewRebuild is fsck without repair on a damaged index file: the
// record checks run on what a rebuild would keep (a salvaged copy in a
// temporary directory, the data files linked there), so that the report
// says what --repair would find and fix too.
func previewRebuild(dir string, rep *FsckReport) *FsckReport {
	unchecked := Problem{Path: indexName,
		What: "damaged index file: its records were not checked (fsck --repair rebuilds it from the readable records)"}
	tmp, err := os.MkdirTemp("", "hgfs-fsck-")
	if err != nil {
		rep.Problems = append(rep.Problems, unchecked)
		return rep
	}
	defer os.RemoveAll(tmp)
	n, err := salvageIndex(dir, filepath.Join(tmp, indexName))
	if err == nil {
		var ents []os.DirEntry
		ents, err = os.ReadDir(dir)
		for _, e := range ents {
			if _, ok := parseDataFileName(e.Name()); ok && err == nil {
				err = os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(tmp, e.Name()))
			}
		}
	}
	var r *FsckReport
	if err == nil {
		var ver uint32
		if ver, _, err = checkVersion(filepath.Join(tmp, indexName), time.Second, false); err == nil {
			r, _, err = fsckPass(tmp, false, ver)
		}
	}
	if err != nil {
		rep.Problems = append(rep.Problems, unchecked)
		return rep
	}
	probs := append(rep.Problems, Problem{Path: indexName,
		What: fmt.Sprintf("damaged index file: records on damaged pages are lost; the checks below ran on its %d readable records, which fsck --repair keeps", n)})
	*rep = *r
	rep.Problems = append(probs, r.Problems...)
	return rep
}

// salvageIndex writes into a fresh bbolt file at dst every record of
// dir's index that can be read, and the data files' records (see
// rebuildIndex). It returns how many records were read.
func salvageIndex(dir, dst string) (int, error) {
	path := filepath.Join(dir, indexName)
	recs := map[string][][2][]byte{}
	n := 0
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return 0, err
	}
	checkBolt(f, st.Size(), true, func(bucket, k, v []byte) {
		if len(k) == 0 || len(k) > bolt.MaxKeySize || int64(len(v)) > bolt.MaxValueSize {
			return
		}
		recs[string(bucket)] = append(recs[string(bucket)], [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		n++
	})
	f.Close()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	os.Remove(dst)
	db, err := bolt.Open(dst, 0o600, &bolt.Options{Timeout: time.Second, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return 0, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range append(append([][]byte{}, allBuckets...), laterBuckets...) {
			b, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			for _, kv := range recs[string(name)] {
				if err := b.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
		ver := uint32(formatVersion)
		for _, vb := range []struct {
			name []byte
			ver  uint32
		}{{bucketVirtual, virtualFormatVersion}, {bucketVdirs, vdirFormatVersion}} {
			vr := recs[string(vb.name)]
			if len(vr) == 0 {
				continue
			}
			ver = max(ver, vb.ver)
			b, err := tx.CreateBucket(vb.name)
			if err != nil {
				return err
			}
			for _, kv := range vr {
				if err := b.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
		}
		m := tx.Bucket(bucketMeta)
		if v := m.Get(metaVersion); len(v) != 4 || binary.BigEndian.Uint32(v) == 0 {
			if err := m.Put(metaVersion, binary.BigEndian.AppendUint32(nil, ver)); err != nil {
				return err
			}
		}
		if len(m.Get(metaCreated)) != 8 {
			if err := m.Put(metaCreated, u64(uint64(time.Now().UnixNano()))); err != nil {
				return err
			}
		}
		if err := m.Delete(metaOpen); err != nil {
			return err
		}
		files := tx.Bucket(bucketDatafiles)
		for _, e := range ents {
			id, ok := parseDataFileName(e.Name())
			if !ok || files.Get(fileKey(id)) != nil {
				continue
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			if err := files.Put(fileKey(id), u64(uint64(info.Size()))); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return 0, err
	}
	return n, nil
}

// indexDamage checks the index file's structure and its format version:
// the problems that make it unsafe to read through bbolt. The error is
// for a cache that must not be touched (in use, newer format) or a file
// that cannot be read.
func indexDamage(path string) ([]string, error) {
	damage, err := checkBoltFile(path, true)
	if err != nil {
		return nil, fmt.Errorf("fsnode: fsck %s: %w", filepath.Dir(path), err)
	}
	if len(damage) > 0 {
		return damage, nil
	}
	if _, _, err := checkVersion(path, time.Second, false); err != nil {
		if errors.Is(err, ErrNewerFormat) || errors.Is(err, ErrUnfinished) || !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotCache) {
			if strings.Contains(err.Error(), "in use") {
				return nil, fmt.Errorf("fsnode: fsck: cache %s is in use", filepath.Dir(path))
			}
			return nil, err
		}
		damage = append(damage, err.Error())
	}
	return damage, nil
}

// fsckVersion returns the cache's format version; with repair a version
// 1 cache is upgraded first, as Open would (a plain check reads the old
// layout, without checksums to verify).
func fsckVersion(dir string, repair bool) (uint32, error) {
	path := filepath.Join(dir, indexName)
	ver, _, err := checkVersion(path, time.Second, false)
	if err != nil || !repair || ver >= formatVersion {
		return ver, err
	}
	db, err := openBolt(path, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return ver, fmt.Errorf("fsnode: fsck %s: %w", dir, err)
	}
	defer closeDB(db, false)
	if err := migrate(db, dir); err != nil {
		return ver, err
	}
	return formatVersion, nil
}

// fsckPass is one check of the index (of format version ver), with repair
// its fixes applied; applied counts them. A panic inside bbolt is
// returned as *panicError.
func fsckPass(dir string, repair bool, ver uint32) (*FsckReport, int, error) {
	path := filepath.Join(dir, indexName)
	db, err := openBolt(path, &bolt.Options{ReadOnly: !repair, Timeout: time.Second})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, 0, fmt.Errorf("fsnode: fsck: cache %s is in use", dir)
		}
		var pe *panicError
		if errors.As(err, &pe) {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("fsnode: fsck %s: %w", dir, err)
	}
	poisoned := false
	defer func() { closeDB(db, poisoned) }()
	c := &fsck{r: &FsckReport{}, repair: repair, inodes: map[Ino]*diskInode{}, paths: map[Ino]string{RootIno: "/"},
		files: map[uint32]int64{}, sizes: map[uint32]int64{}, version: ver, dir: dir,
		verified: map[runKey]error{}, open: map[uint32]*os.File{}}
	defer c.closeFiles()
	var unlisted []string
	err = guarded("fsck", func() error {
		return db.View(func(tx *bolt.Tx) error {
			c.tx = tx
			missing := false
			for _, b := range allBuckets {
				if tx.Bucket(b) == nil {
					name := b
					c.problem(indexName, 0, func(tx *bolt.Tx) error { _, err := tx.CreateBucket(name); return err }, "bucket %q missing", b)
					missing = true
				}
			}
			if missing {
				return nil // the next pass checks the records
			}
			var err error
			unlisted, err = c.checkDataFiles(dir)
			if err != nil {
				return err
			}
			c.loadInodes()
			c.loadDirents()
			c.walkTree()
			c.checkInodes()
			c.checkVdirs()
			c.checkRdevXattrs()
			c.checkCounters()
			return nil
		})
	})
	if err != nil {
		var pe *panicError
		if errors.As(err, &pe) {
			poisoned = true
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("fsnode: fsck %s: %w", dir, err)
	}
	if repair && len(c.fixes) > 0 {
		err := guarded("fsck repair", func() error {
			return db.Update(func(tx *bolt.Tx) error {
				for _, fix := range c.fixes {
					if err := fix(tx); err != nil {
						return err
					}
				}
				return nil
			})
		})
		if err != nil {
			var pe *panicError
			if errors.As(err, &pe) {
				poisoned = true
				return nil, 0, err
			}
			return c.r, 0, fmt.Errorf("fsnode: fsck %s: repair: %w", dir, err)
		}
	}
	if repair {
		for _, name := range unlisted {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return c.r, 0, err
			}
		}
	}
	return c.r, len(c.fixes) + len(unlisted), nil
}

func (c *fsck) checkDataFiles(dir string) ([]string, error) {
	err := c.tx.Bucket(bucketDatafiles).ForEach(func(k, v []byte) error {
		if len(k) != 4 || len(v) != 8 {
			c.problem("datafiles", 0, deleteKeyFix(bucketDatafiles, k), "bad data file record %x", k)
			return nil
		}
		id := uint32(k[0])<<24 | uint32(k[1])<<16 | uint32(k[2])<<8 | uint32(k[3])
		n, _ := decodeU64(v, "")
		c.files[id] = int64(n)
		c.r.DataFiles++
		c.r.DataBytes += int64(n)
		st, err := os.Stat(filepath.Join(dir, dataFileName(id)))
		switch {
		case err != nil && errors.Is(err, os.ErrNotExist):
			c.sizes[id] = 0
		case err != nil:
			return err
		default:
			c.sizes[id] = st.Size()
			if st.Size() > int64(n) {
				c.r.GarbageBytes += st.Size() - int64(n)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var unlisted []string
	for _, e := range ents {
		if id, ok := parseDataFileName(e.Name()); ok {
			if _, listed := c.files[id]; !listed {
				// Written after the last commit; Open deletes it too.
				unlisted = append(unlisted, e.Name())
				if info, err := e.Info(); err == nil {
					c.r.GarbageBytes += info.Size()
				}
			}
		}
	}
	return unlisted, nil
}

func (c *fsck) loadInodes() {
	c.tx.Bucket(bucketInodes).ForEach(func(k, v []byte) error {
		ino, err := decodeInoKey(k)
		if err == nil && ino == 0 {
			err = errors.New("inode number 0")
		}
		if err != nil {
			c.problem(fmt.Sprintf("inode key %x", k), 0, deleteKeyFix(bucketInodes, k), "%v", err)
			return nil
		}
		d, err := decodeInode(v)
		if err != nil {
			c.problem(c.path(ino), ino, func(tx *bolt.Tx) error { return deleteInodeRecords(tx, ino, false) }, "%v", err)
			return nil
		}
		c.inodes[ino] = &d
		c.r.Inodes++
		switch d.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			c.r.Dirs++
		case syscall.S_IFREG:
			c.r.Files++
		case syscall.S_IFLNK:
			c.r.Symlinks++
		default:
			c.r.Special++
		}
		return nil
	})
}

func (c *fsck) loadDirents() {
	c.tx.Bucket(bucketDirents).ForEach(func(k, v []byte) error {
		parent, name, err := decodeDirentKey(k)
		if err != nil {
			c.problem(fmt.Sprintf("entry key %q", k), 0, deleteKeyFix(bucketDirents, k), "%v", err)
			return nil
		}
		d, err := decodeDirent(v)
		if err != nil {
			c.problem(fmt.Sprintf("entry %q in inode %d", name, parent), 0, deleteKeyFix(bucketDirents, k), "%v", err)
			return nil
		}
		c.dirents = append(c.dirents, fsckDirent{parent: parent, name: name, d: d, key: bytes.Clone(k)})
		return nil
	})
	// dirseq must mirror dirents exactly.
	want := map[string]string{}
	for _, e := range c.dirents {
		want[string(dirseqKey(e.parent, e.d.Seq))] = e.name
	}
	c.tx.Bucket(bucketDirseq).ForEach(func(k, v []byte) error {
		name, ok := want[string(k)]
		if !ok || name != string(v) {
			c.problem(fmt.Sprintf("cookie %x", k), 0, deleteKeyFix(bucketDirseq, k), "readdir order record %q matches no entry", v)
			return nil
		}
		delete(want, string(k))
		return nil
	})
	for k, name := range want {
		key, val := []byte(k), []byte(name)
		c.problem(fmt.Sprintf("entry %q", name), 0, func(tx *bolt.Tx) error { return tx.Bucket(bucketDirseq).Put(key, val) },
			"readdir order record missing")
	}
}

// walkTree walks from the root, assigning paths, checking types, parent
// pointers and single naming of directories, and counting links.
func (c *fsck) walkTree() {
	root := c.inodes[RootIno]
	if root == nil || root.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		now := time.Now().UnixNano()
		fresh := diskInode{Mode: syscall.S_IFDIR | 0o755, Nlink: 2, Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()),
			Atime: now, Mtime: now, Ctime: now, Parent: RootIno}
		c.problem("/", RootIno, putInodeFix(RootIno, fresh), "root inode missing or not a directory (a new, empty root replaces it)")
		return
	}
	byParent := map[Ino][]fsckDirent{}
	for _, e := range c.dirents {
		byParent[e.parent] = append(byParent[e.parent], e)
	}
	links := map[Ino]uint32{}
	subdirs := map[Ino]uint32{}
	seen := map[Ino]bool{RootIno: true}
	queue := []Ino{RootIno}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		ents := byParent[dir]
		delete(byParent, dir)
		sort.Slice(ents, func(i, j int) bool { return ents[i].name < ents[j].name })
		for _, e := range ents {
			p := strings.TrimSuffix(c.path(dir), "/") + "/" + e.name
			child := c.inodes[e.d.Child]
			if child == nil {
				c.problem(p, e.d.Child, c.dropEntry(e), "entry names missing inode %d", e.d.Child)
				continue
			}
			typ := child.Mode & syscall.S_IFMT
			if typ != e.d.Type {
				fixed := e.d
				fixed.Type = typ
				key := e.key
				c.problem(p, e.d.Child, func(tx *bolt.Tx) error { return tx.Bucket(bucketDirents).Put(key, encodeDirent(fixed)) },
					"entry type %#o, inode type %#o", e.d.Type, typ)
			}
			if typ == syscall.S_IFDIR {
				if seen[e.d.Child] {
					c.problem(p, e.d.Child, c.dropEntry(e), "directory has another name (cycle or directory hard link)")
					continue
				}
				seen[e.d.Child] = true
				c.paths[e.d.Child] = p
				subdirs[dir]++
				if child.Parent != dir {
					fixed := *child
					fixed.Parent = dir
					c.problem(p, e.d.Child, putInodeFix(e.d.Child, fixed), "parent pointer %d, entry is in %d", child.Parent, dir)
					*child = fixed
				}
				queue = append(queue, e.d.Child)
				continue
			}
			if _, ok := c.paths[e.d.Child]; !ok {
				c.paths[e.d.Child] = p
			}
			links[e.d.Child]++
		}
	}
	// Entries under inodes never reached: under a missing, unreachable or
	// non-directory parent.
	for parent, ents := range byParent {
		for _, e := range ents {
			c.problem(fmt.Sprintf("inode %d/%s", parent, e.name), e.d.Child, c.dropEntry(e), "entry under an unreachable or missing directory")
		}
	}
	orphans := map[Ino]bool{}
	c.tx.Bucket(bucketOrphans).ForEach(func(k, _ []byte) error {
		ino, err := decodeInoKey(k)
		if err != nil {
			c.problem(fmt.Sprintf("orphan key %x", k), 0, deleteKeyFix(bucketOrphans, k), "%v", err)
			return nil
		}
		orphans[ino] = true
		return nil
	})
	for ino, d := range c.inodes {
		reached := seen[ino] || links[ino] > 0
		if !reached {
			if orphans[ino] && d.Nlink == 0 {
				c.r.Orphans++
				if c.repair {
					c.fixes = append(c.fixes, func(tx *bolt.Tx) error { return deleteInodeRecords(tx, ino, false) })
				}
				delete(c.inodes, ino) // its contents need no check
				continue
			}
			c.problem(c.path(ino), ino, func(tx *bolt.Tx) error { return deleteInodeRecords(tx, ino, false) },
				"unreachable inode (nlink %d)", d.Nlink)
			delete(c.inodes, ino)
			continue
		}
		if orphans[ino] {
			c.problem(c.path(ino), ino, deleteKeyFix(bucketOrphans, inoKey(ino)), "listed as orphan but linked")
		}
		want := links[ino]
		if d.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			want = 2 + subdirs[ino]
		}
		if d.Nlink != want {
			fixed := *d
			fixed.Nlink = want
			c.problem(c.path(ino), ino, putInodeFix(ino, fixed), "nlink %d, want %d", d.Nlink, want)
			*d = fixed
		}
	}
	for ino := range orphans {
		if _, ok := c.inodes[ino]; !ok && !seen[ino] && links[ino] == 0 {
			if c.tx.Bucket(bucketInodes).Get(inoKey(ino)) == nil {
				c.problem(fmt.Sprintf("inode %d", ino), ino, deleteKeyFix(bucketOrphans, inoKey(ino)), "orphan record without inode")
			}
		}
	}
}

func (c *fsck) dropEntry(e fsckDirent) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketDirents).Delete(e.key); err != nil {
			return err
		}
		return tx.Bucket(bucketDirseq).Delete(dirseqKey(e.parent, e.d.Seq))
	}
}

// checkInodes checks each reachable inode's contents.
func (c *fsck) checkInodes() {
	inl := c.tx.Bucket(bucketInline)
	exb := c.tx.Bucket(bucketExtents)
	for ino, d := range c.inodes {
		k := inoKey(ino)
		p := c.path(ino)
		iv, ev := inl.Get(k), exb.Get(k)
		typ := d.Mode & syscall.S_IFMT
		inline := typ == syscall.S_IFLNK || (typ == syscall.S_IFREG && d.Flags&flagInline != 0)
		switch {
		case typ == syscall.S_IFDIR:
			if iv != nil || ev != nil || d.Flags != 0 {
				c.problem(p, ino, func(tx *bolt.Tx) error {
					fixed := *d
					fixed.Flags = 0
					if err := tx.Bucket(bucketInodes).Put(k, encodeInode(&fixed)); err != nil {
						return err
					}
					if err := tx.Bucket(bucketInline).Delete(k); err != nil {
						return err
					}
					return tx.Bucket(bucketExtents).Delete(k)
				}, "directory has contents")
			}
		case typ != syscall.S_IFREG && !inline:
			if iv != nil || ev != nil || d.Flags != 0 || d.Size != 0 {
				c.problem(p, ino, specialNoContentsFix(ino, *d), "%s has contents", typeName(typ))
			}
		case inline:
			if ev != nil {
				c.problem(p, ino, deleteKeyFix(bucketExtents, k), "inline file also has extents")
			}
			if iv == nil {
				iv = []byte{}
				c.problem(p, ino, func(tx *bolt.Tx) error { return tx.Bucket(bucketInline).Put(k, []byte{}) }, "inline contents missing")
			}
			if uint64(len(iv)) != d.Size {
				fixed := *d
				fixed.Size = uint64(len(iv))
				c.problem(p, ino, putInodeFix(ino, fixed), "size %d, inline contents %d bytes", d.Size, len(iv))
			}
		case d.Flags&flagVirtual != 0:
			if iv != nil {
				c.problem(p, ino, deleteKeyFix(bucketInline, k), "virtual file also has inline contents")
			}
			if ev != nil {
				c.problem(p, ino, deleteKeyFix(bucketExtents, k), "virtual file also has extents")
			}
			var vv []byte
			if b := c.tx.Bucket(bucketVirtual); b != nil {
				vv = b.Get(k)
			}
			ref, err := decodeVirtualRef(vv)
			if err != nil {
				// Nothing names the contents any more: the file cannot
				// be restored, only emptied.
				fixed := *d
				fixed.Flags, fixed.Size = flagInline, 0
				c.problem(p, ino, func(tx *bolt.Tx) error {
					if err := tx.Bucket(bucketInodes).Put(k, encodeInode(&fixed)); err != nil {
						return err
					}
					if b := tx.Bucket(bucketVirtual); b != nil {
						if err := b.Delete(k); err != nil {
							return err
						}
					}
					return tx.Bucket(bucketInline).Put(k, []byte{})
				}, "%v (repair empties the file)", err)
				continue
			}
			if c.version < virtualFormatVersion {
				c.problem(p, ino, func(tx *bolt.Tx) error {
					return tx.Bucket(bucketMeta).Put(metaVersion, binary.BigEndian.AppendUint32(nil, virtualFormatVersion))
				}, "virtual file in a cache of format version %d", c.version)
			}
			c.r.Virtual = append(c.r.Virtual, VirtualFile{Path: p, Ino: ino, Size: d.Size, Ref: ref})
		default:
			if iv != nil {
				c.problem(p, ino, deleteKeyFix(bucketInline, k), "file with extents also has inline contents")
			}
			if ev == nil {
				continue
			}
			exts, err := decodeExtentsVersion(ev, c.version)
			if err != nil {
				c.problem(p, ino, func(tx *bolt.Tx) error { return tx.Bucket(bucketExtents).Put(k, encodeExtents(nil)) }, "%v", err)
				continue
			}
			good := exts[:0:0]
			bad := false
			first := len(c.r.Problems)
			for _, e := range exts {
				committed, listed := c.files[e.File]
				switch {
				case !listed:
					c.problem(p, ino, nil, "extent at %d refers to unknown data file %d", e.Off, e.File)
				case e.FileOff+e.Len > committed:
					c.problem(p, ino, nil, "extent at %d reaches %s:%d, past its committed length %d", e.Off, dataFileName(e.File), e.FileOff+e.Len, committed)
				case e.FileOff+e.Len > c.sizes[e.File]:
					c.problem(p, ino, nil, "extent at %d reaches %s:%d, past its end %d", e.Off, dataFileName(e.File), e.FileOff+e.Len, c.sizes[e.File])
				case e.end() > int64(d.Size):
					c.problem(p, ino, nil, "extent at %d ends at %d, past the size %d", e.Off, e.end(), d.Size)
				default:
					good = append(good, e)
					c.r.LiveBytes += e.Len
					c.checkSum(p, ino, e)
					continue
				}
				bad = true
			}
			if bad && c.repair {
				// Bad extents become holes; the file keeps its size.
				c.fixes = append(c.fixes, func(tx *bolt.Tx) error { return tx.Bucket(bucketExtents).Put(k, encodeExtents(good)) })
				for i := first; i < len(c.r.Problems); i++ {
					c.r.Problems[i].Repaired = !c.r.Problems[i].Damaged
				}
			}
		}
	}
	// Virtual records of inodes that do not exist or are not virtual.
	if vb := c.tx.Bucket(bucketVirtual); vb != nil {
		vb.ForEach(func(k, _ []byte) error {
			ino, err := decodeInoKey(k)
			if d := c.inodes[ino]; err != nil || d == nil || d.Flags&flagVirtual == 0 {
				c.problem(fmt.Sprintf("inode %d", ino), ino, deleteKeyFix(bucketVirtual, k), "virtual record of no virtual file")
			}
			return nil
		})
	}
	// Contents of inodes that do not exist.
	for _, b := range [][]byte{bucketInline, bucketExtents} {
		c.tx.Bucket(b).ForEach(func(k, _ []byte) error {
			ino, err := decodeInoKey(k)
			if err != nil || c.tx.Bucket(bucketInodes).Get(k) == nil {
				c.problem(fmt.Sprintf("inode %d", ino), ino, deleteKeyFix(b, k), "%s record without inode", b)
			}
			return nil
		})
	}
}

// checkVdirs checks each deferred listing (vdir.go): it decodes, its
// directory is one the walk reached, and it names no file the directory
// has an entry for. Repair drops a bad listing: its files leave the
// working copy (their contents are still the store's revisions).
func (c *fsck) checkVdirs() {
	vb := c.tx.Bucket(bucketVdirs)
	if vb == nil {
		return
	}
	names := map[Ino]map[string]bool{}
	for _, e := range c.dirents {
		if names[e.parent] == nil {
			names[e.parent] = map[string]bool{}
		}
		names[e.parent][e.name] = true
	}
	raise := false
	vb.ForEach(func(k, v []byte) error {
		ino, err := decodeInoKey(k)
		if err != nil {
			c.problem(fmt.Sprintf("deferred listing key %x", k), 0, deleteKeyFix(bucketVdirs, k), "%v", err)
			return nil
		}
		p, reached := c.paths[ino]
		if ino == RootIno {
			p, reached = "/", true
		}
		if d := c.inodes[ino]; d == nil || d.Mode&syscall.S_IFMT != syscall.S_IFDIR || !reached {
			c.problem(fmt.Sprintf("inode %d", ino), ino, deleteKeyFix(bucketVdirs, k), "deferred listing of no directory")
			return nil
		}
		r, err := decodeVdir(v)
		if err != nil {
			c.problem(p, ino, deleteKeyFix(bucketVdirs, k), "%v (repair drops its files)", err)
			return nil
		}
		for i := range r.ents {
			if names[ino][r.ents[i].name] {
				c.problem(p, ino, deleteKeyFix(bucketVdirs, k), "deferred file %q is also an entry (repair drops the deferred files)", r.ents[i].name)
				return nil
			}
		}
		raise = raise || c.version < vdirFormatVersion
		for i := range r.ents {
			e := &r.ents[i]
			fp := strings.TrimSuffix(p, "/") + "/" + e.name
			c.r.Virtual = append(c.r.Virtual, VirtualFile{Path: fp, Size: e.size, Ref: VirtualRef{Node: e.node, Path: r.path(e)}})
		}
		c.r.Deferred += len(r.ents)
		return nil
	})
	if raise {
		c.problem("/", RootIno, func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(metaVersion, binary.BigEndian.AppendUint32(nil, vdirFormatVersion))
		}, "deferred listing in a cache of format version %d", c.version)
	}
}

func (c *fsck) checkCounters() {
	m := c.tx.Bucket(bucketMeta)
	nextIno, err1 := decodeU64(m.Get(metaNextIno), "next inode")
	nextSeq, err2 := decodeU64(m.Get(metaNextSeq), "next cookie")
	var maxIno Ino
	c.tx.Bucket(bucketInodes).ForEach(func(k, _ []byte) error {
		if ino, err := decodeInoKey(k); err == nil && ino > maxIno {
			maxIno = ino
		}
		return nil
	})
	var maxSeq uint64
	for _, e := range c.dirents {
		maxSeq = max(maxSeq, e.d.Seq)
	}
	if err1 != nil || nextIno <= uint64(maxIno) {
		v := u64(uint64(maxIno) + 1)
		c.problem("meta", 0, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaNextIno, v) },
			"next inode number %d not above the highest %d", nextIno, maxIno)
	}
	if err2 != nil || nextSeq <= maxSeq {
		v := u64(max(maxSeq+1, firstSeq))
		c.problem("meta", 0, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaNextSeq, v) },
			"next cookie %d not above the highest %d", nextSeq, maxSeq)
	}
}

// checkSum verifies the run of extent e of the file at path p, once per
// run, and reports damaged contents by path. Repair leaves them alone:
// the bytes cannot be restored, and dropping or re-checksumming them
// would hide the damage from whoever reads the file; the problem stays
// unrepaired ("cannot be repaired").
func (c *fsck) checkSum(p string, ino Ino, e extent) {
	if c.version < 2 {
		return
	}
	k := e.key()
	err, done := c.verified[k]
	if !done {
		err = c.verifyRun(e)
		c.verified[k] = err
	}
	if err == nil {
		return
	}
	what := fmt.Sprintf("data damaged (extent at offset %d, %s at %d): %v", e.Off, dataFileName(e.File), e.runStart(), err)
	if c.repair {
		what += "; cannot be repaired: restore the file or remove it"
	}
	c.r.Problems = append(c.r.Problems, Problem{Path: p, Ino: ino, What: what, Damaged: true})
	c.r.Damaged++
}

// verifyRun reads e's run from its data file and checks its CRC.
func (c *fsck) verifyRun(e extent) error {
	fh, ok := c.open[e.File]
	if !ok {
		var err error
		if fh, err = os.Open(filepath.Join(c.dir, dataFileName(e.File))); err != nil {
			fh = nil
		}
		c.open[e.File] = fh
	}
	if fh == nil {
		return fmt.Errorf("%s cannot be opened", dataFileName(e.File))
	}
	buf := make([]byte, e.Run)
	if n, err := fh.ReadAt(buf, e.runStart()); n != len(buf) {
		return fmt.Errorf("reading %s: %v", dataFileName(e.File), err)
	}
	if sum := checksum(buf); sum != e.Sum {
		return fmt.Errorf("CRC32C %08x, want %08x", sum, e.Sum)
	}
	return nil
}

func (c *fsck) closeFiles() {
	for _, fh := range c.open {
		if fh != nil {
			fh.Close()
		}
	}
}
