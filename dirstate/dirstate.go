package dirstate

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hgfs/hgfs/internal/sysio"
	"github.com/hgfs/hgfs/revlog"
)

// RangeMask keeps the 31 bits of seconds and sizes hg records
// (dirstatemap.rangemask, timestamp.rangemask).
const RangeMask = 0x7FFFFFFF

// MaxSize bounds a dirstate file (docket or data) this package reads:
// 1 GiB, far beyond the 230,000-file working copies hg handles (about 20
// MB of v1).
const MaxSize = 1 << 30

// Mode bits of a file (the S_IF* values hg records in v1).
const (
	ModeRegular = 0o100000
	ModeSymlink = 0o120000
	modeType    = 0o170000
)

// ErrCorrupt is wrapped by every error about a malformed dirstate.
var ErrCorrupt = errors.New("dirstate: corrupt")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Timestamp is hg's timestamp: seconds since the epoch truncated to 31
// bits, nanoseconds (0 when unknown), and whether the seconds alone are
// not to be trusted (v2 only).
type Timestamp struct {
	Sec             int32
	Nsec            uint32
	SecondAmbiguous bool
}

// TimestampOf is timestamp.mtime_of for a time in nanoseconds since the
// epoch.
func TimestampOf(unixNano int64) Timestamp {
	sec, nsec := unixNano/1e9, unixNano%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return Timestamp{Sec: int32(sec & RangeMask), Nsec: uint32(nsec)}
}

// Ambiguous reports whether a file with mtime m cannot be recorded clean
// when now is the filesystem's present time (merge.update's filter:
// mtime seconds at or after now's).
func Ambiguous(m, now Timestamp) bool { return m.Sec >= now.Sec }

// Reliable is timestamp.reliable_mtime_of: the mtime m of a file found
// clean may be recorded when boundary is the filesystem's time before
// the file was looked at, unless it is in boundary's second (then only
// an earlier nanosecond one, flagged second-ambiguous) or less than a
// day after it (a write racing the look could leave the same mtime).
func Reliable(m, boundary Timestamp) (Timestamp, bool) {
	switch {
	case m.Sec == boundary.Sec:
		if m.Nsec != 0 && boundary.Nsec != 0 && m.Nsec < boundary.Nsec {
			return Timestamp{Sec: m.Sec, Nsec: m.Nsec, SecondAmbiguous: true}, true
		}
		return Timestamp{}, false
	case boundary.Sec < m.Sec && m.Sec < 3600*24+boundary.Sec:
		return Timestamp{}, false
	}
	return m, true
}

// Entry is one file of the dirstate (hg's DirstateItem).
type Entry struct {
	Path      string
	WCTracked bool // tracked in the working directory
	P1Tracked bool // tracked in the first parent
	P2Info    bool // involved in a merge with the second parent

	HasModeSize bool
	Mode        uint32 // st_mode: type and permission bits
	Size        int32  // 31 bits
	HasMtime    bool
	Mtime       Timestamp

	Copy string // copy source, or ""
	// Fallback holds v2's fallback exec/symlink bits as read
	// (flagFallbackMask), kept for a v2 rewrite.
	Fallback uint16
}

// Clean returns the entry of a file tracked in the working directory
// and its first parent, known clean with mode, size and, unless mtime is
// nil, mtime (dirstate.update_file with parentfiledata).
func Clean(path string, mode uint32, size int64, mtime *Timestamp) Entry {
	e := Entry{Path: path, WCTracked: true, P1Tracked: true, HasModeSize: true, Mode: mode, Size: int32(size & RangeMask)}
	if mtime != nil {
		e.HasMtime, e.Mtime = true, *mtime
	}
	return e
}

func (e *Entry) anyTracked() bool { return e.WCTracked || e.P1Tracked || e.P2Info }
func (e *Entry) removed() bool    { return !e.WCTracked && (e.P1Tracked || e.P2Info) }
func (e *Entry) added() bool      { return e.WCTracked && !(e.P1Tracked || e.P2Info) }

// MaybeClean reports whether the file can be clean at all: tracked in
// the working directory and its first parent, with no merge information.
func (e *Entry) MaybeClean() bool { return e.WCTracked && e.P1Tracked && !e.P2Info }

// State is the v1 state letter: 'n' normal, 'a' added, 'r' removed, 'm'
// merged (DirstateItem._v1_state).
func (e *Entry) State() byte {
	switch {
	case e.removed():
		return 'r'
	case e.P1Tracked && e.P2Info:
		return 'm'
	case e.added():
		return 'a'
	}
	return 'n'
}

// v1 special values (parsers.py).
const (
	nonNormal    = -1
	fromP2       = -2
	ambiguousSec = -1
)

// V1 returns the state, mode, size and mtime v1 records
// (DirstateItem._v1_*).
func (e *Entry) V1() (state byte, mode uint32, size, mtime int32) {
	state = e.State()
	if e.HasModeSize {
		mode = e.Mode
	}
	switch {
	case e.removed() && e.P1Tracked && e.P2Info:
		size = nonNormal
	case e.P2Info:
		size = fromP2
	case e.removed():
		size = 0
	case e.added(), !e.HasModeSize:
		size = nonNormal
	default:
		size = e.Size
	}
	switch {
	case e.removed():
		mtime = 0
	case !e.HasMtime, e.P2Info, !e.P1Tracked, e.Mtime.SecondAmbiguous:
		mtime = ambiguousSec
	default:
		mtime = e.Mtime.Sec
	}
	return
}

// fromV1 is DirstateItem.from_v1_data.
func fromV1(path string, state byte, mode uint32, size, mtime int32) (Entry, error) {
	e := Entry{Path: path}
	switch state {
	case 'm':
		e.WCTracked, e.P1Tracked, e.P2Info = true, true, true
	case 'a':
		e.WCTracked = true
	case 'r':
		switch size {
		case nonNormal:
			e.P1Tracked, e.P2Info = true, true
		case fromP2:
			e.P2Info = true
		default:
			e.P1Tracked = true
		}
	case 'n':
		switch {
		case size == fromP2:
			e.WCTracked, e.P2Info = true, true
		case size == nonNormal:
			e.WCTracked, e.P1Tracked = true, true
		default:
			e.WCTracked, e.P1Tracked = true, true
			e.HasModeSize, e.Mode, e.Size = true, mode, size
			if mtime != ambiguousSec {
				e.HasMtime, e.Mtime = true, Timestamp{Sec: mtime}
			}
		}
	default:
		return e, corrupt("unknown state %q for %q", state, path)
	}
	return e, nil
}

// Dirstate is a whole dirstate: parents and entries.
type Dirstate struct {
	Parents [2]revlog.Node
	Entries []Entry
}

// Sort orders the entries by path.
func (d *Dirstate) Sort() {
	sort.Slice(d.Entries, func(i, j int) bool { return d.Entries[i].Path < d.Entries[j].Path })
}

// Map returns the entries by path.
func (d *Dirstate) Map() map[string]*Entry {
	m := make(map[string]*Entry, len(d.Entries))
	for i := range d.Entries {
		m[d.Entries[i].Path] = &d.Entries[i]
	}
	return m
}

// An Index finds d's entries by path, as Map's map does (the last of
// two entries of one path wins). Over entries sorted by path, as hgfs
// writes them, it builds nothing: asked in path order, as an update's
// passes over two manifests ask, each answer is the entry after the
// last one found, and other questions are answered by binary search.
// On the 20,000-file working copy, the map of every entry (built, then
// asked three times) was 13% of the mount daemon's update; the check
// that the entries are sorted costs 50 us. Entries in any other order
// (hg's own dirstate is in its own order) get Map's map.
type Index struct {
	sorted []Entry
	next   int // where the next question is likely answered
	m      map[string]*Entry
}

// Index returns an Index of d's entries (which it must not change
// meanwhile; their fields may).
func (d *Dirstate) Index() *Index {
	es := d.Entries
	for i := 1; i < len(es); i++ {
		if es[i-1].Path >= es[i].Path {
			return &Index{m: d.Map()}
		}
	}
	return &Index{sorted: es}
}

// Get returns the entry of path.
func (x *Index) Get(path string) (*Entry, bool) {
	if x.m != nil {
		e, ok := x.m[path]
		return e, ok
	}
	es := x.sorted
	if p := x.next; p < len(es) {
		switch c := strings.Compare(es[p].Path, path); {
		case c == 0:
			x.next = p + 1
			return &es[p], true
		case c > 0 && (p == 0 || es[p-1].Path < path):
			return nil, false // between the last answer and the next
		}
	}
	i := sort.Search(len(es), func(i int) bool { return es[i].Path >= path })
	x.next = i
	if i < len(es) && es[i].Path == path {
		x.next = i + 1
		return &es[i], true
	}
	return nil, false
}

// Read reads the dirstate of the repository whose .hg directory is hgDir,
// in v2 if v2 (the repository requires dirstate-v2). A missing dirstate
// is an empty one with null parents, as hg reads it.
func Read(hgDir string, v2 bool) (*Dirstate, error) {
	data, err := readOptional(filepath.Join(hgDir, "dirstate"))
	if err != nil {
		return nil, err
	}
	if !v2 {
		return ParseV1(data)
	}
	if len(data) == 0 {
		return &Dirstate{}, nil
	}
	dk, err := ParseDocket(data)
	if err != nil {
		return nil, err
	}
	if dk.DataSize == 0 {
		return &Dirstate{Parents: dk.Parents}, nil
	}
	tree, err := sysio.ReadFile(filepath.Join(hgDir, dk.DataFile()), MaxSize)
	if err != nil {
		return nil, err
	}
	return ParseV2(dk, tree)
}

func readOptional(path string) ([]byte, error) {
	data, err := sysio.ReadFile(path, MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// File is one file of an encoded dirstate, named relative to .hg.
type File struct {
	Name string
	Data []byte
}

// Encode returns the files that hold d: v1's "dirstate"; or, in v2 if
// v2, a new data file ("dirstate.<random id>") then the docket
// ("dirstate") naming it, in the order they are to be written.
func Encode(d *Dirstate, v2 bool) ([]File, error) {
	return EncodeList(d.Parents, entrySlice(d.Entries), v2)
}

// EncodeList is Encode of a dirstate with parents and the entries l,
// which v1 reads one at a time: a checkout of 250,000 files built
// them all as a Dirstate, 20 MB of the clone's peak live heap, to
// write 14 MB of dirstate. v2's tree holds them all whichever way.
func EncodeList(parents [2]revlog.Node, l EntryList, v2 bool) ([]File, error) {
	if !v2 {
		data, err := appendV1(nil, parents, l)
		if err != nil {
			return nil, err
		}
		return []File{{"dirstate", data}}, nil
	}
	d := &Dirstate{Parents: parents}
	if s, ok := l.(entrySlice); ok {
		d.Entries = s
	} else {
		d.Entries = make([]Entry, l.Len())
		for i := range d.Entries {
			d.Entries[i] = l.At(i)
		}
	}
	tree, meta, err := d.EncodeV2()
	if err != nil {
		return nil, err
	}
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	dk := &Docket{Parents: d.Parents, Meta: meta, DataSize: uint32(len(tree)), ID: hex.EncodeToString(id[:])}
	return []File{{dk.DataFile(), tree}, {"dirstate", dk.Encode()}}, nil
}

// Write replaces the dirstate of the repository whose .hg directory is
// hgDir, in v2 if v2. The caller holds the wlock.
func Write(hgDir string, d *Dirstate, v2 bool) error {
	files, err := Encode(d, v2)
	if err != nil {
		return err
	}
	if !v2 {
		return writeAtomic(hgDir, "dirstate", files[0].Data)
	}
	old, _ := readOptional(filepath.Join(hgDir, "dirstate"))
	data, docket := files[0], files[1]
	if err := writeAtomic(hgDir, data.Name, data.Data); err != nil {
		return err
	}
	if err := writeAtomic(hgDir, docket.Name, docket.Data); err != nil {
		os.Remove(filepath.Join(hgDir, data.Name))
		return err
	}
	if odk, err := ParseDocket(old); err == nil && odk.ID != "" && odk.DataFile() != data.Name {
		os.Remove(filepath.Join(hgDir, odk.DataFile()))
	}
	return nil
}

// writeAtomic writes dir/name through a temporary file renamed over it,
// created 0666 less the umask as hg's atomictempfile creates a new file.
func writeAtomic(dir, name string, data []byte) error {
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+name+"-"+hex.EncodeToString(r[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Now is timestamp.get_fs_now: the mtime the filesystem holding hgDir
// gives a file created now.
func Now(hgDir string) (Timestamp, error) {
	f, err := os.CreateTemp(hgDir, "tmp-now-")
	if err != nil {
		return Timestamp{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Timestamp{}, err
	}
	return TimestampOf(fi.ModTime().UnixNano()), nil
}

// tickWait bounds NowAfterTick's wait (timestamp.FS_TICK_WAIT_TIMEOUT).
const tickWait = 100 * time.Millisecond

// NowAfterTick is timestamp.wait_until_fs_tick: the filesystem's time
// once its clock has been seen to move on from Now's (a jiffy on Linux),
// and true; after tickWait without a tick, Now's time and false.
func NowAfterTick(hgDir string) (Timestamp, bool, error) {
	start := time.Now()
	old, err := Now(hgDir)
	if err != nil {
		return Timestamp{}, false, err
	}
	for {
		now, err := Now(hgDir)
		if err != nil {
			return Timestamp{}, false, err
		}
		if now != old {
			return now, true, nil
		}
		if time.Since(start) > tickWait {
			return old, false, nil
		}
	}
}

// ModeOf is the st_mode hg records for a file of info fi (a regular file
// or a symlink).
func ModeOf(fi fs.FileInfo) uint32 {
	perm := uint32(fi.Mode().Perm())
	if fi.Mode()&fs.ModeSymlink != 0 {
		return ModeSymlink | perm
	}
	return ModeRegular | perm
}

// IsSymlink reports whether st_mode mode is a symlink's.
func IsSymlink(mode uint32) bool { return mode&modeType == ModeSymlink }

// WriteBranch writes .hg/branch (the working directory's branch name and
// a newline, as dirstate.setbranch does).
func WriteBranch(hgDir, branch string) error {
	return writeAtomic(hgDir, "branch", BranchFile(branch))
}

// ReadBranch reads the working directory's branch from .hg/branch as
// dirstate._branch does: its content without surrounding whitespace,
// "default" if that is empty or the file does not exist.
func ReadBranch(hgDir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(hgDir, "branch"))
	if errors.Is(err, fs.ErrNotExist) {
		return "default", nil
	}
	if err != nil {
		return "", err
	}
	if b := strings.Trim(string(data), " \t\n\r\v\f"); b != "" {
		return b, nil
	}
	return "default", nil
}

// BranchFile is the content of .hg/branch naming branch.
func BranchFile(branch string) []byte { return []byte(branch + "\n") }

// String renders an entry as `hg debugstate --no-dates` prints it
// (without the umask hg takes off the mode).
func (e *Entry) String() string {
	state, mode, size, mtime := e.V1()
	m := strconv.FormatUint(uint64(mode&0o777), 8)
	if mode&0o20000 != 0 {
		m = "lnk"
	}
	t := "set                 "
	if mtime == ambiguousSec {
		t = "unset               "
	}
	return fmt.Sprintf("%c %3s %10d %s%s", state, m, size, t, e.Path)
}
