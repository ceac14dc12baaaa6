// Package fsnode is the file system core of hgfs: inodes, directories,
// handles and POSIX semantics over a cache made of a bbolt index and a few
// append-only data files, with a background group committer. The FUSE
// adapters (package mount) translate kernel requests into calls on *FS;
// the clone sink (Sink) and the io/fs view (FS.FS) use it directly.
//
// It owns everything an adapter would otherwise decide for itself about
// the cache's files: the walk of a path from the root for adapters that
// name files by path (Walk, which takes the kernel reference an adapter
// drops with Forget) and the permission check of access(2) from owner,
// group and mode bits (Attr.CheckAccess, FS.Access). It knows nothing of
// FUSE, kernels or the mount's control directory (package mount), and
// must not: adapters convert, fsnode decides.
//
// # Terminology
//
//   - cache: a directory holding index.db and data-NNNN files.
//   - index: index.db, a bbolt database holding only metadata and small
//     contents: inodes, directory entries, extents, inline contents, the
//     data files' committed lengths, orphans (format.go documents every
//     record).
//   - data file: data-NNNN, append-only; file bytes above InlineMax live
//     there. Overwritten, truncated or deleted bytes are dead until
//     compaction copies the live ones out and deletes the file.
//   - live / dead bytes: the bytes of a data file that extents refer to,
//     counted in memory per data file; the rest of the file.
//   - extent: file bytes [off, off+len) stored in data file F at offset O.
//     Bytes of a file no extent covers are zeros (holes).
//   - run: the bytes of a data file written together, at most 128 KiB
//     (maxRunLen), with a CRC32C (Castagnoli) that the extent records
//     carry. An extent is a run or, once an overwrite or truncate cut it,
//     a piece of one (checksum.go).
//   - inline: a regular file of at most InlineMax bytes (default 4 KiB;
//     most revlog .i files) kept whole in the index; symlink targets too.
//   - special file: a FIFO, Unix socket or character or block device
//     (Mknod). It has attributes and names but no contents: the kernel
//     implements its I/O (pipe, socket, the device's driver) itself. A
//     device's number (rdev) is in the rdev bucket.
//   - extended attributes: name -> value pairs of an inode (xattr.go), in
//     the xattrs bucket, in the user., trusted., security. and
//     system.posix_acl_* namespaces. They change with the inode: a
//     snapshot carries the inode's whole set, committed in the same
//     transaction as its inode record, so a crash keeps either the old
//     set or the new one; they follow links and renames and go with the
//     inode. An access ACL keeps the mode in step (acl.go).
//   - cookie: a directory entry's sequence number, assigned from one
//     increasing counter when the entry is made. ReadDir returns entries by
//     cookie and resumes "after cookie N", so offsets stay valid however
//     the directory changes.
//   - kernel reference (lookup count): taken by Lookup, Create, Mkdir,
//     Symlink, Link; dropped by Forget.
//   - orphan: an inode with no links that is still open or referenced; it
//     is recorded in the orphans bucket and reclaimed when the last handle
//     and reference go, at Close, or (after a crash) at Open.
//   - dirty inode: one with changes not yet handed to the committer; the
//     set of dirty inodes is the committer's queue.
//
// # On-disk layout
//
//	cache/
//	  index.db    bbolt: meta (format version, creation time, counters,
//	              the unfinished-ingest mark, the "open" mark of a cache
//	              not closed yet), inodes, dirents + dirseq
//	              (entries by name and by cookie), extents (with the CRC32C
//	              of their runs), inline, datafiles (committed lengths),
//	              orphans, rdev (device numbers), xattrs (extended
//	              attributes), virtual (virtual files' references),
//	              vdirs (deferred listings: a directory's virtual files
//	              not made yet, vdir.go)
//	  data-0001   append-only file bytes
//	  data-0002   a new one starts at Options.DataFileMax
//
// A cache records its format version (2: checksummed extents, device
// numbers and extended attributes; 3 once it has held a virtual file,
// virtual.go, whose contents are a file revision named by reference; 4
// once it has held a deferred listing, vdir.go);
// Open refuses a newer one with
// ErrNewerFormat before writing anything, upgrades version 1 in one
// transaction (migrate.go) and creates the rdev and xattrs buckets where
// they are missing. A cache made by CreateForIngest is marked unfinished
// until a Sink's Finish; Open and Fsck refuse a marked cache with
// ErrUnfinished (a clone that was killed).
//
// # Checksums
//
// Every byte read from a data file is verified against its run's CRC32C
// (once per run per in-memory inode; checksum.go explains the costs): a
// mismatch is EIO wrapping ErrDamaged, with a log line naming the inode
// and the data file and offset. Fsck verifies every run and reports
// damaged contents by path; repair cannot restore them and leaves the
// file as it is. Inline contents live in the index, which has no
// checksum of its own.
//
// # Allocation
//
// Fallocate (special.go) offers mode 0, KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE
// and ZERO_RANGE (with or without KEEP_SIZE); other modes are
// EOPNOTSUPP. Unwritten bytes are holes, so allocating writes nothing
// and reserves nothing: data files grow only by appending, and space set
// aside now could not be given to the writes that come later. Mode 0
// fails with ENOSPC only when the growth exceeds the disk's free space
// at the time; a later write can still meet a full disk (as on many
// FUSE file systems; glibc's posix_fallocate gets the same success
// without writing zeros). A punched or zeroed range drops its extents:
// their data file bytes become dead, for compaction.
//
// # Durability
//
// Every change is made in memory (visible to all readers at once) and
// marks its inode dirty. File bytes are pwritten to the current data file
// as Write runs (small files stay in memory, inline). The committer takes
// a snapshot of all dirty inodes at once and commits it in one bbolt
// transaction (group commit), in this order (commit.go, writeBatch):
//
//  1. the data bytes are already in the data files;
//  2. fsync the data files written since their last sync (and the cache
//     directory after creating a data file), unless NoSync;
//  3. commit the bbolt transaction holding the records and each data
//     file's committed length: the commit point.
//
// A batch starts CommitInterval (50ms) after the first change, at once when
// BatchItems inodes wait or a caller waits. Flush and Release never wait.
// The window trades how old the state a crash leaves may be (never older
// than the last fsync or sync; ext4 commits every 5 s) against the cost
// of a commit (bbolt's page writes and fdatasyncs): with 5ms, tar -x of
// the bench's 20,000-file store into a mount committed 900 times and the
// daemon spent 17% more CPU (tar 6.9 s against 6.2 s); a real hg clone
// --stream into a mount, 2,700 commits against 300 and 25% more daemon
// CPU (20.5-28.6 s against 17.3-20.7 s). 200ms saved little more.
// Fsync waits for the batch holding the file's latest change; Sync and
// Close wait for everything. The queue is bounded by QueueCap: mutating
// calls block before taking any lock while it is full. Options.NoSync
// skips the fsyncs (UNSAFE against power loss; safe against kill -9).
//
// The fsync of step 2 is fdatasync on Linux, F_FULLFSYNC on macOS and
// FlushFileBuffers on Windows, where the directory sync is skipped (NTFS
// journals the file's creation; see sys_windows.go).
//
// Ingest mode: while a Sink is active, group commits are larger and are
// not fsynced unless someone waits; Sink.Finish makes everything durable
// with one sync. A power failure during an ingest can therefore lose the
// cache (redo the clone); a process crash cannot (see Sink).
//
// # Compaction
//
// Compaction (compact.go) copies the live extents of mostly dead data
// files into the current one (verifying each run: an intact piece gets a
// new CRC, a damaged one is copied with its whole run and old CRC), commits, then drops the old file from the
// index, commits, and deletes it; a file with no live bytes is dropped at
// once. Each data file's live bytes are counted in memory (set at Open
// from the extents, adjusted as extents change), so Stats and the
// scheduler know the dead bytes without reading the index. With
// Options.AutoCompact a background compactor runs when the dead bytes
// exceed CompactGarbage x live + CompactSlack (0.2 and 32 MiB) and nothing
// has changed for CompactIdle (2s), at most CompactRate bytes of I/O per
// second (32 MiB/s), starting a new current data file when the current one
// is mostly dead so that it can be compacted too. A write that fails with
// ENOSPC compacts without rate bound (CompactAll) and is retried once.
// Data files stop growing (ENOSPC) while the disk has less than the
// index's headroom free (1/32 of the disk, 2 to 64 MiB; datafile.go), so
// the commits that record a write, and the deletes and compaction that
// give space back, always find room.
// Compact, CompactAll and CompactIfDue run it on demand. The crash tests
// kill a compaction after each of its steps.
//
// # Crash consistency
//
// After a crash each file is at the state of the last commit that
// included it: never torn (an inode's attributes, extents and entries are
// one record set in one transaction), never pointing at unwritten bytes
// (extents enter memory only after their bytes are written, and are
// committed only after they are synced). A rename or any other namespace
// operation is in one snapshot, so it is atomic. Open cuts each data file
// to its committed length, deletes data files the index does not list and
// reclaims orphans. Fsck checks all of this; the crash tests kill a writer
// with SIGKILL and check it.
//
// # Concurrency
//
// Locks, in the order they may be taken:
//
//  1. FS.tree (RWMutex): the namespace. Namespace operations (create,
//     mkdir, unlink, rmdir, rename, link, symlink) take it for writing;
//     Lookup, ReadDir, GetAttr, SetAttr, Open take it for reading. An
//     *inode from the table may be used while holding it, an open handle
//     or a pin (inode.pins, taken under it: I/O by inode), since eviction
//     needs the write lock and skips handles and pins. A kernel reference
//     alone does not keep an inode in the table: a clean one is evicted
//     with its count kept (FS.refs).
//  2. inode.mu (RWMutex): one inode's attributes and contents. Write and
//     truncate take it for writing, Read for reading: reads and writes of
//     different files never contend, and data I/O never holds tree.
//  3. leaf locks: committer.mu (queue, counters), FS.hmu (handle table),
//     FS.imu (inode table), dataFiles.mu (append cursor; the pwrite runs
//     outside it).
//
// FS.compactMu serialises compaction runs; it is taken before any of the
// above, and a run holds tree and inode locks only for a step (finding or
// installing one piece, detaching files), never across I/O.
//
// A handle has its own RWMutex: calls read-lock it, Release write-locks
// it and marks it released, so later calls get EBADF.
//
// The committer holds tree (write) and each dirty inode's lock only while
// copying the snapshot; the fsyncs and the bbolt commit run with no lock
// held, so file system calls proceed during a commit.
//
// # Errors
//
// File system operations return syscall.Errno values, possibly wrapped
// with context (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EINVAL,
// ENAMETOOLONG, EPERM for a directory hard link, EBADF for a released or
// wrongly opened handle, EFBIG past 1 PiB, EIO for a damaged index,
// damaged file contents or a failed commit). ToErrno extracts the errno; adapters use it. After a
// commit fails the cache refuses changes (EIO) until reopened. Cache-level
// errors (Create, Open, Fsck) are the sentinels in errors.go.
//
// A damaged index never panics (guard.go). Every bbolt call runs with
// faults turned into panics (debug.SetPanicOnFault) and under recover: a
// panic reading the index is that call's error (ErrCorrupt and EIO) and
// the FS keeps serving, once a probe transaction shows that bbolt's locks
// were released; a panic in a write transaction (whose rollback may have
// left bbolt's writer lock held) or a probe that does not finish poisons
// the FS: every later index access and change answers EIO at once, and
// Close does not wait on bbolt's locks. Open checks the meta and freelist
// pages with bounds-checked reads before bolt.Open (boltcheck.go), and
// the whole index file when the cache was not closed cleanly (the meta
// "open" mark that Open sets and Close removes): a damaged index is
// refused with ErrCorrupt naming the cache and hgfs fsck --repair. Fsck
// reports a damaged index file as problems instead of failing, and runs
// its record checks on a salvaged copy; with repair it rebuilds the file
// from its readable records (keeping index.db.damaged) and repeats its
// record repairs until a pass has nothing to fix: the next Fsck is clean,
// or the report lists what was not repaired.
//
// # ReadDir and "."/".."
//
// ReadDir never returns "." and "..": cookies start at 3, so an adapter
// that synthesises them can use offsets 1 and 2. ReadDirLimit pages
// through a large directory without copying all of it per call.
//
// # Testing
//
// The POSIX cases live in fsnode/posixtest, written against a small path
// interface: this package runs them on the core (through a kernel-like
// path adapter), package mount through a real FUSE mount of every
// backend (go-fuse, and cgofuse in builds with its tags: one shared
// suite, mount/suite_linux_test.go), and TestNative and TestNativeTmpfs
// on ext4 and tmpfs to show the cases are the kernel's behaviour. The
// cases of FIFOs, sockets, devices, fallocate and extended attributes use
// the kernel's calls on host paths, so they run on the native file
// systems and the mounts only. Every test cache is Fsck'd at
// cleanup. The crash test SIGKILLs a writer child
// (FSNODE_CRASH_ROUNDS rounds, default 10); the random-operation test
// compares the core with the kernel's own file system step by step
// (FSNODE_MODEL_SEEDS for more seeds). TestRandomIndexDamage damages
// copies of a cache's index.db in random ways and opens, walks, fscks,
// repairs and fscks each again, counting panics and hung steps
// (FSNODE_DAMAGE_RUNS runs, default 30).
package fsnode
