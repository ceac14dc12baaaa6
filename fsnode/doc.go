// Package fsnode is the file system core of hgfs: inodes, directories,
// handles and POSIX semantics over a cache made of a bbolt index and a few
// append-only data files, with a background group committer. The FUSE
// adapters (package mount) translate kernel requests into calls on *FS;
// the clone sink (Sink) and the io/fs view (FS.FS) use it directly.
//
// # Terminology
//
//   - cache: a directory holding index.db and data-NNNN files.
//   - index: index.db, a bbolt database holding only metadata and small
//     contents: inodes, directory entries, extents, inline contents, the
//     data files' committed lengths, orphans (format.go documents every
//     record).
//   - data file: data-NNNN, append-only; file bytes above InlineMax live
//     there. Overwritten or deleted bytes are dead until Compact.
//   - extent: file bytes [off, off+len) stored in data file F at offset O.
//     Bytes of a file no extent covers are zeros (holes).
//   - inline: a regular file of at most InlineMax bytes (default 4 KiB;
//     most revlog .i files) kept whole in the index; symlink targets too.
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
//	              the "open" mark of a cache not closed yet),
//	              inodes, dirents + dirseq (entries by name and by cookie),
//	              extents, inline, datafiles (committed lengths), orphans
//	  data-0001   append-only file bytes
//	  data-0002   a new one starts at Options.DataFileMax
//
// A cache records its format version; Open refuses a newer one with
// ErrNewerFormat before writing anything.
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
// Compact (compact.go) copies the live extents of mostly-dead data files
// into the current one, commits, then drops the old file from the index,
// commits, and deletes it.
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
//     *inode from the table may be used while holding it or a reference
//     (handle, lookup), since eviction needs the write lock.
//  2. inode.mu (RWMutex): one inode's attributes and contents. Write and
//     truncate take it for writing, Read for reading: reads and writes of
//     different files never contend, and data I/O never holds tree.
//  3. leaf locks: committer.mu (queue, counters), FS.hmu (handle table),
//     FS.imu (inode table), dataFiles.mu (append cursor; the pwrite runs
//     outside it).
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
// wrongly opened handle, EFBIG past 1 PiB, EIO for a damaged index or a
// failed commit). ToErrno extracts the errno; adapters use it. After a
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
// path adapter), package mount through a real FUSE mount. Every test
// cache is Fsck'd at cleanup. The crash test SIGKILLs a writer child
// (FSNODE_CRASH_ROUNDS rounds, default 10); the random-operation test
// compares the core with the kernel's own file system step by step
// (FSNODE_MODEL_SEEDS for more seeds). TestRandomIndexDamage damages
// copies of a cache's index.db in random ways and opens, walks, fscks,
// repairs and fscks each again, counting panics and hung steps
// (FSNODE_DAMAGE_RUNS runs, default 30).
package fsnode
