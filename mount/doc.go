// Package mount puts an fsnode cache (or, read-only, an ordinary
// repository's .hg) on a directory through the kernel: go-fuse's raw,
// inode-based protocol on Linux (Mount, MountRepo), and cgofuse's
// path-based API over the same core (MountCgofuse): WinFsp on Windows,
// built without cgo, and libfuse3 on Linux in builds with -tags
// cgofuse,fuse3, where its tests run. The cgofuse adapter's paths,
// handles, errors and differences from this one are described in
// cgofuse.go's header comment. Other platforms (macOS) build, and Mount
// and MountCgofuse say what is missing.
//
// # Adapter
//
// rawFS implements fuse.RawFileSystem, embedding go-fuse's default (ENOSYS)
// implementation for what hgfs does not do (lseek, copy_file_range,
// ioctl: the kernel falls back to generic code for each).
// Every method is a few lines: convert the request, call the fsnode method
// of the same name, convert the attributes, map the error. FUSE node IDs
// are fsnode inode numbers (the root is 1 in both), file handles are
// fsnode handles or, where the kernel lets OPEN be declined (no_open, as
// on every current Linux), 0, with I/O addressed to the inode (see
// "Opening without OPEN" below); directory offsets are fsnode's stable
// directory cookies. The adapter keeps no per-inode or per-handle state
// of its own.
// Requests that create inodes pass the caller's uid and gid to fsnode
// (fsnode.WithCaller). Lookup counts: every reply carrying a node ID (LOOKUP,
// CREATE, MKDIR, SYMLINK, LINK, and each READDIRPLUS entry) is one fsnode
// lookup, undone by FORGET.
//
// Directory listings carry "." and ".." (offsets 1 and 2, which fsnode's
// cookies never use) followed by fsnode's entries.
//
// # Special files, fallocate, extended attributes
//
// MKNOD creates FIFOs, Unix sockets (bind(2)), device nodes and regular
// files on both adapters (raw_special_linux.go, cgofuse_special.go). The
// attributes carry the type and rdev, from which the kernel gives the
// node its own file operations: opening a FIFO, socket or device never
// reaches the daemon (no OPEN, READ or WRITE), exactly as for a local
// file system. Creating a device needs CAP_MKNOD, which the kernel
// checks; opening one needs a mount without nodev, which both adapters
// ask for ("dev") when the daemon runs as root; a mount by another user
// is nodev, as fusermount makes it, and opening a device there is EACCES.
//
// FALLOCATE (go-fuse only) is fsnode.Fallocate: mode 0, KEEP_SIZE,
// PUNCH_HOLE|KEEP_SIZE, ZERO_RANGE; other modes EOPNOTSUPP; nothing is
// reserved (fsnode/doc.go, Allocation). cgofuse has no fallocate
// callback, so through it fallocate(2) fails with EOPNOTSUPP in every
// mode (glibc's posix_fallocate then writes zeros).
//
// Extended attributes (GETXATTR, LISTXATTR, SETXATTR, REMOVEXATTR) are
// fsnode's on both adapters, for cache mounts (repository views keep
// DisableXAttrs). POSIX ACLs: the mount does not negotiate FUSE_POSIX_ACL
// (go-fuse's EnableAcl), so the kernel passes system.posix_acl_access
// and system.posix_acl_default through as bytes and does not enforce
// them: getfacl, setfacl, cp -a and rsync -X keep them, and setting an
// access ACL sets the mode (fsnode/acl.go), but an ACL grants or denies
// nothing beyond the mode bits and a default ACL is not inherited by new
// files. Enforcing them would need default_permissions on every mount
// (the RootPermissions mount drops it) and fsnode to apply default ACLs
// and the umask at creation.
//
// # Set-id bits and capabilities (FUSE_HANDLE_KILLPRIV_V2)
//
// A write, a truncation, a fallocate or a chown clears a file's S_ISUID,
// its S_ISGID when group execute is set, and its security.capability
// attribute. By default the FUSE kernel module does it itself, asking the
// daemon for security.capability (GETXATTR) before every write(2) once a
// mount has extended attributes: one more round trip per write (10-byte
// writes, BenchmarkSmallWrite's median: 16-20 us against 10-11 us),
// and it fetches the attributes (GETATTR) before every chown. Cache
// mounts of the go-fuse adapter therefore negotiate
// FUSE_HANDLE_KILLPRIV_V2 when the kernel offers it (Linux 5.12 on;
// go-fuse masks ExtraCapabilities with the kernel's offer, so an older
// kernel keeps today's behaviour). The kernel then marks what must clear,
// the adapter passes the mark to fsnode as fsnode.WithKillPriv and fsnode
// clears (fsnode/killpriv.go, one function). What arrives, as observed on
// Linux 6.18:
//
//   - WRITE from a writer without CAP_FSETID carries WRITE_KILL_SUIDGID:
//     S_ISUID, S_ISGID if S_IXGRP, and security.capability go. Root's
//     writes carry nothing and keep the bits, as on a local system
//     (security.capability the kernel's own first-write check below
//     still finds and removes, with a REMOVEXATTR).
//   - truncate(2), ftruncate(2) and open(2) with O_TRUNC (SETATTR with
//     a size; hgfs does not ask for FUSE_ATOMIC_O_TRUNC, so the kernel
//     never passes O_TRUNC in OPEN) carry FATTR_KILL_SUIDGID when the
//     caller lacks CAP_FSETID: the same clearing.
//   - chown(2) of a non-directory carries FATTR_KILL_SUIDGID whoever
//     calls, root included: the same clearing, as a local chown clears
//     S_ISUID even for root.
//   - FALLOCATE carries no mark (the protocol has none), and the kernel
//     no longer clears for it: the adapter marks it itself for callers
//     other than uid 0, standing in for CAP_FSETID, in every mode (the
//     kernel's own clearing covered FALLOC_FL_KEEP_SIZE too).
//   - OPEN and CREATE with OPEN_KILL_SUIDGID (O_TRUNC without
//     CAP_FSETID) are handled too; CREATE clears only a file that
//     already existed, never the bits a new file is created with.
//
// The kernel still checks by itself on the first write after it fetched
// a file's attributes (it sets S_NOSEC on the inode once it found
// nothing to strip, and forgets it whenever attributes arrive, as after
// CREATE or a stat following a write): one GETXATTR for the first write,
// none for the writes after it. A chown still costs a GETXATTR (the
// VFS asks before any owner change) but no longer a GETATTR. Where this
// differs from a local file system: S_ISGID without S_IXGRP is kept even
// when the writer is not in the file's group (the kernel would clear it;
// the daemon does not know the writer's groups), and fallocate goes by
// the caller's uid rather than CAP_FSETID. Set-id
// bits take no effect on go-fuse mounts anyway (nosuid: hgfs never asks
// for suid). The cgofuse adapter cannot negotiate the capability, and
// there the kernel does it all as before.
//
// # The control directory
//
// MOUNTPOINT/.hgfs is described once, adapter-neutral, in control.go
// (type control: names, modes, sizes, contents, what is refused), with
// inode numbers in the upper half of the 64-bit space, which fsnode never
// allocates; each adapter answers its requests on it in a few lines per
// operation (virtual_linux.go for the raw adapter, viewNode in
// views_linux.go for the node API, ctlNode in cgofuse.go). Lookup
// finds it but no listing shows it, so hg status, find, tar and du never
// see it; nothing can be created, renamed or removed under that name (an
// entry of that name already in a cache is shadowed at the root). It holds
// "stats": JSON (Info) with the daemon's pid, its source and fsnode.Stats,
// generated whenever its attributes are asked, which is at every read(2)
// (noopen_linux.go).
// `hgfs stats` reads it and `hgfs unmount` learns the pid to wait for.
// Beside it the control directory holds the read-only views of package
// hgview (revisions' files, logs, revlog indexes), listed inside .hgfs
// and served in both go-fuse mount kinds (cache and repository; the
// cgofuse adapter has stats only); views_linux.go's header comment says
// how, and how the kernel caches them.
//
// # Errors
//
// One function, toStatus (errnoOf underneath), maps fsnode's errors: a
// wrapped syscall.Errno goes to the kernel as is, a cancelled context
// (the kernel's INTERRUPT) as EINTR, anything else is logged and answered
// EIO. Extended attributes are disabled at mount time (DisableXAttrs), so
// the kernel answers EOPNOTSUPP itself without a round trip; hg, cp -a and
// tar cope.
//
// # Kernel caching
//
// The daemon holds the cache exclusively, so the cache changes only
// through the mount, and the kernel already updates or invalidates what
// its own requests change; where the daemon changes more than the
// request says (set-id bits cleared by a WRITE or FALLOCATE, the mode
// following an access ACL set as an xattr), it has the kernel forget the
// node's attributes (rawFS.forgetAttr), or stat -c %a and ls -l, which
// ask for the mode alone, would show the old one for an hour. Entries, negative entries and attributes of
// cache nodes are therefore cached for an hour (nodeTimeout), and file
// pages are kept across opens (FOPEN_KEEP_CACHE; see openFlags): each
// expiry would cost a LOOKUP or GETATTR round trip, and reading a tree
// after listing it (find | xargs cat, hg's checkout after its clone)
// otherwise looked every name up again once the listing was a second old.
// The control directory keeps one-second timeouts (views follow commits).
// In a changeset's tree under .hgfs, directory listings (READDIRPLUS)
// answer every entry with its node and attributes, and the repository
// view stores a file's content in the kernel's page cache (NOTIFY_STORE)
// before answering its OPEN, so a tree walk costs OPEN and RELEASE per
// file on a kernel that requires OPEN; with no_open a walk costs none
// (views_linux.go).
// Writes are write-through (no writeback cache), so fsnode sees every
// write when it happens and its own O_APPEND and size logic stays
// authoritative. The writeback cache was measured on the FUSE floor
// (bench/fusefloor.go with CAP_WRITEBACK_CACHE added, 2026-12-07, 2
// CPUs, io_uring) and loses on every count: close(2) waits for the dirty
// pages (the kernel writes them back in its FLUSH path whatever
// FOPEN_NOFLUSH says), 5,000 closes of a new 64-byte file took p50 22 µs
// and p99 77-88 µs against 2.7 and 8-28 µs write-through; tar -x of
// the 20,000-file store sent 181,222 requests against 162,445 (the
// WRITEs stay one per file, and each writeback adds a SETATTR carrying
// the kernel's times) and was slower in 4 of 4 alternated pairs
// (2.16-2.68 s against 2.04-2.21 s).
//
// Nor does the page cache of a cache mount's files get pages pushed
// ahead of a read (NOTIFY_STORE, as the immutable views do): the kernel
// copies a write(2) into the file's pages before its WRITE reaches the
// daemon, and a store of the old content landing between the two would
// leave readers the old bytes after write(2) returned; the daemon cannot
// tell that a WRITE is on its way, and invalidating from the WRITE
// handler would wait on the writer's locked page. A larger read-ahead
// window (the bdi's read_ahead_kb raised from 128 to 1024 or 4096 KiB,
// so that READs carry max_write's 1 MiB) cut a cold read of a 200 MiB
// file on the floor from 801 READs to 202-205 but not its time (156-163
// ms against 157-228): the copies into and out of the page cache are
// the cost, not the round trips. FUSE passthrough, which would read a
// large file at the local disk's speed, is not used: the kernel takes its
// backing file from OPEN's reply, which no_open (below) removes for every
// file, and the backing file must hold the file's bytes alone at their
// offsets, where the cache keeps them in runs of shared data files
// (fsnode). Locks (fcntl and flock) are left to the kernel, which
// implements them locally: exact for a mount served on one host. hg
// itself locks with symlinks, which fsnode provides.
//
// # Permissions
//
// Without AllowOther only the mounting user gets in. Permissions are
// checked by the kernel from the modes hgfs reports (default_permissions).
// With Options.RootPermissions, a cache mounted by root without
// AllowOther leaves that option out (rootOnly): root's checks always pass
// but for executing a file without execute bits, which the kernel checks
// anyway, and access(2)/chdir(2), which then reach Access. That saves
// the GETATTR of the parent directory the kernel otherwise sends before
// the next lookup in a directory whose entries changed: one round trip
// per file tar or hg creates. It is for the mount daemon only. A process
// that serves its own mount and starts programs with their working
// directory on it (the tests) must not use it: the child's chdir, between
// vfork and exec, waits for the ACCESS answer, the parent thread is stuck
// in vfork, and a garbage collection starting then can stop neither, so
// the server never answers.
//
// Access, in every adapter, is fsnode's check (fsnode.Attr.CheckAccess)
// on the attributes the adapter reports; the adapters keep no permission
// logic of their own. The cgofuse adapter's Access says how it names the
// caller on Windows, where WinFsp reports none outside creating requests.
//
// # Request cost
//
// Every FUSE request is a round trip between two processes: tens of
// microseconds, against one or two for a local system call, and mostly
// spent waking the other side. What is left per file is what the kernel
// insists on: tar -x as root sends LOOKUP (negative), CREATE, GETXATTR
// and WRITE, three SETATTRs (times, owner, mode) with one more GETXATTR
// before the owner's, and RELEASE (the GETXATTRs ask for
// security.capability: see "Set-id bits and capabilities"; the GETATTR
// the kernel also asked before a chown is gone with
// FUSE_HANDLE_KILLPRIV_V2); hg's stream clone
// sends LOOKUP (negative, for its unlink), LOOKUP (its mkdir of the
// existing directory, which the kernel always revalidates), CREATE,
// IOCTL (Python's isatty, which FUSE cannot decline once and for all),
// WRITE and RELEASE. RELEASE is asynchronous: close(2) only queues it.
// With no_open (below) neither OPEN nor RELEASE is sent at all, and a
// file read a second time costs no request. (The hgfs daemon used to put
// its threads in SCHED_BATCH so that one woken by a RELEASE would not
// preempt the process that just closed the file; with no RELEASE left
// that only delayed every wake-up inside the daemon on a busy machine,
// fsync's above all, and it is now off unless HGFS_TUNE has schedbatch:
// cmd/hgfs/tune_linux.go. Mount itself leaves the process's scheduling
// alone.)
//
// What those requests cost by themselves is measured by make bench's
// FUSE floor (bench/fusefloor.go): a daemon that answers the kernel as
// this adapter does, with the same settings (NewCacheServer), from maps
// in memory. On the 20,000-file store (2 CPUs, a virtual machine,
// 2026-12-03, n=3) tar -x took 7.25 s into the floor against 8.4 s into
// hgfs and 0.32 s natively; a fresh cat of every file 2.57 s against
// 3.24 s and 0.67 s; hg clone --stream 19.3 s against 20.2 s and 5.9 s;
// hg update of the working copy 11.0 s against 12.3 s and 4.7 s. hgfs
// is within 1.05-1.26x of the floor; the floor itself is 2.3-23x
// native: on this machine the round trips are the cost. At 250,000
// files (n=2) tar -x took 89-99 s into the floor, 114-116 s into hgfs
// and 4.6-5.3 s natively.
//
// # Memory mappings
//
// Shared mappings work as on any FUSE file system without a writeback
// cache: a page fault on a page the kernel does not hold is a READ
// (with readahead), a page dirtied through a mapping is written back
// as a WRITE when the kernel chooses, by msync(MS_SYNC) or fsync (then
// FSYNC, which waits for fsnode's durable commit) and at the latest when
// the mapping goes (munmap writes the file's dirty pages and waits).
// Pages stay cached across opens (no_open's FOPEN_KEEP_CACHE), so a
// file mapped a second time costs nothing; a truncation that changes the
// size, or a GETATTR that finds a new size or mtime (AUTO_INVAL_DATA),
// drops the file's cached pages, as the kernel does for every FUSE
// file system. A write(2) through another descriptor updates the same
// pages the mapping shows. The mtime rule has a cost on cache mounts,
// whose files change only through the kernel: a read(2) after a write(2)
// asks GETATTR, whose mtime is the daemon's, not the one the kernel set,
// and the file's pages go (200 cycles of a write(2), a read(2) and reads
// through a mapping of a 16 MiB file: 201 GETATTRs and 200 READs, against
// 1 and 0 with AUTO_INVAL_DATA declined). It stays because the control
// directory's files whose content moves rely on it (noopen_linux.go);
// declining it for cache mounts would need those files invalidated
// explicitly (NOTIFY_INVAL_INODE) when their mtime moves. The shared suite checks all three (writes
// through a mapping seen by read(2) and after a remount, a mapping
// seeing a write(2), an fsx-like mix); `make bench` times mapped reads
// and the fsx-like mix against native.
//
// # Opening without OPEN
//
// Both mount kinds decline OPEN with ENOSYS where the kernel supports
// it; from then on the kernel opens, creates and closes files without
// telling the daemon, keeps their pages across opens and sends READ,
// WRITE and FSYNC with handle 0. Reading every file of a warm mount then
// costs no request per file, which OPEN and RELEASE made 2.2x native;
// noopen_linux.go's header comment says what changes with it (handles,
// FLUSH, files whose content moves, the repository view's .hg).
//
// # Lifecycle and durability
//
// Mount returns once the kernel answers on the mount point. close(2)
// does not reach the daemon: with no_open there is nothing to release,
// and the one FLUSH the kernel tries is answered ENOSYS, after which it
// sends none; on a kernel that requires OPEN, files are opened with
// FOPEN_NOFLUSH and RELEASE is sent asynchronously. A failed background commit shows on
// fsync and as EIO on every later mutating request, as a failed writeback
// shows on a local filesystem. fsync waits for its file, fsync on a directory
// drains everything (fsnode has no finer unit). Server.Unmount drains
// (fsnode.FS.Sync) and then unmounts; an unmount from outside
// (fusermount3 -u, `hgfs unmount`) ends the request loop, after which Wait
// returns and the owner closes the cache, which drains what is left. A
// killed daemon loses nothing that fsync or a drain had made durable, and
// never leaves a torn file (fsnode's commit order); its dead mount is
// removed with fusermount3 -u -z.
//
// # Repository view
//
// MountRepo shows an ordinary repository read-only: MOUNTPOINT/.hg is a
// go-fuse loopback of REPO/.hg (so `hg -R MOUNTPOINT log` works; with
// no_open read by path, loop_linux.go), the
// working files are not shown, and the kernel enforces read-only ("ro").
// It carries the same unlisted .hgfs/stats.
//
// # Tests
//
// One suite (suite_linux_test.go: fsnode's POSIX conformance cases, the
// mount's own POSIX cases, the control directory) runs against every
// backend: go-fuse, go-fuse with RootPermissions, and cgofuse in builds
// with -tags cgofuse,fuse3. A new backend adds itself to the list rather
// than copying cases.
package mount
