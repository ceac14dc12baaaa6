package mount

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/hgfs/hgfs/fsnode"
)

// Options configure a mount.
type Options struct {
	// AllowOther lets users other than the one who mounted access the
	// mount (FUSE allow_other; non-root users need user_allow_other in
	// /etc/fuse.conf). Without it only the mounting user (and root, as
	// the kernel decides) gets in.
	AllowOther bool
	// Debug logs every FUSE request and reply (go-fuse's debug output).
	Debug bool
	// FsName is the "source" column of /proc/mounts and df; the cache
	// or repository directory is a good choice.
	FsName string
	// ReadOnly mounts with the kernel's "ro" flag: every modifying
	// request fails with EROFS before it reaches hgfs.
	ReadOnly bool
	// RootPermissions, for a cache mounted by root without AllowOther
	// (go-fuse adapter), leaves out the kernel's default_permissions:
	// only root can use such a mount and its checks always pass, so the
	// GETATTR the kernel sends before a lookup in a directory whose
	// entries changed (one per file tar or hg creates) is saved. Only for
	// a daemon process: chdir(2) into the mount then asks the daemon
	// (ACCESS), and a process serving its own mount that starts a
	// program with its working directory there deadlocks if a garbage
	// collection starts while the child, between vfork and exec, waits
	// for that answer. See doc.go, Permissions.
	RootPermissions bool
	// Yield (go-fuse adapter) passes one request in 13 through the Go
	// scheduler before it is handled, which keeps the runtime's monitor
	// from taking the Ps of readers waiting in read(2) (see
	// yield_linux.go for why and what it saves). Per request, not
	// process-wide; the hgfs daemon sets it unless HGFS_TUNE has -yield.
	Yield bool
	// URing (go-fuse adapter, Linux) serves the mount's requests over
	// io_uring where the kernel offers FUSE over io_uring (Linux 6.14+,
	// the fuse module's enable_uring parameter set): one system call
	// per request instead of two, answered on a thread of the CPU its
	// caller runs on (internal/fuseuring). Elsewhere the mount serves
	// /dev/fuse as before. The hgfs daemon sets it unless HGFS_TUNE has
	// -fuseuring.
	URing bool
}

// ReaderPool is how many goroutines the go-fuse adapter reads requests
// with when Mount or MountRepo makes its server now: GOMAXPROCS clamped
// to 2..16, as go-fuse's fuse.NewServer sizes its pool. A daemon that
// raises GOMAXPROCS by this many after mounting (HGFS_TUNE's procs
// trick) keeps a spare P for every reader waiting in read(2).
func ReaderPool() int { return min(max(runtime.GOMAXPROCS(0), 2), 16) }

// ErrUnsupported is returned by Mount on platforms without an adapter yet.
var ErrUnsupported = errors.New("mounting is not supported on this platform")

// ErrNotMounted is returned when a path is not an hgfs mount.
var ErrNotMounted = errors.New("not an hgfs mount")

// VirtualDirName is the control directory at the root of every hgfs
// mount. Lookups find it, directory listings never show it (so hg status,
// find and tar do not see it), and nothing can be created under that name.
const VirtualDirName = ".hgfs"

// StatsPath returns the path of the mount's stats file, which reads as the
// JSON encoding of an Info.
func StatsPath(mountpoint string) string {
	return filepath.Join(mountpoint, VirtualDirName, "stats")
}

// Info is what MOUNTPOINT/.hgfs/stats holds: who serves the mount, from
// where, and (for a cache mount) the committer's counters.
type Info struct {
	Pid        int    `json:"pid"`
	Mountpoint string `json:"mountpoint"`
	Source     string `json:"source"` // cache directory or repository
	Kind       string `json:"kind"`   // "cache" or "repo"
	ReadOnly   bool   `json:"readonly"`
	// Virtual: the mount takes VirtualXattr (the go-fuse adapter), so
	// hgfs update makes files virtual instead of writing them.
	Virtual bool `json:"virtual,omitempty"`
	// Updates counts the hgfs updates the daemon did in the cache
	// (UpdateXattr) since it started.
	Updates int64 `json:"updates,omitempty"`
	// UpdateFullChecks counts the update requests whose dirty check
	// looked at every tracked file (refused ones too); the others looked
	// only at what had changed since the daemon's update before
	// (update_watch_linux.go).
	UpdateFullChecks int64 `json:"update_full_checks,omitempty"`
	// URingRequests counts the requests that came over io_uring
	// (Options.URing); absent when every request comes on /dev/fuse.
	URingRequests uint64        `json:"uring_requests,omitempty"`
	Stats         *fsnode.Stats `json:"stats,omitempty"`
}

// ReadInfo reads the stats file of the hgfs mount at mountpoint; a path
// that is not an hgfs mount gives an error wrapping ErrNotMounted.
func ReadInfo(mountpoint string) (*Info, error) {
	info, _, err := ReadStats(mountpoint)
	return info, err
}

// ReadStats is ReadInfo that also returns the stats file's bytes, the
// JSON that was decoded.
//
// A reader of the stats file gets one generation whole, except where
// another process reads it at the same moment on Linux (servedFiles in
// control.go: without OPEN, nothing tells two readers apart), so a read
// that does not parse is read again, a few times, before the file is
// called bad.
func ReadStats(mountpoint string) (*Info, []byte, error) {
	var err error
	for range 3 {
		var data []byte
		data, err = os.ReadFile(StatsPath(mountpoint))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", mountpoint, ErrNotMounted)
		}
		if err != nil {
			return nil, nil, err
		}
		var info Info
		if err = json.Unmarshal(data, &info); err == nil {
			return &info, data, nil
		}
	}
	return nil, nil, fmt.Errorf("%s: %w (bad stats file: %v)", mountpoint, ErrNotMounted, err)
}
