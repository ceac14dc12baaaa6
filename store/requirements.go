package store

// Requirements files: .hg/requires and, with share-safe, .hg/store/requires.
// Each is a list of feature names, one a line (localrepo.py _readrequires:
// bytes.splitlines, so "\n", "\r\n" and "\r" all end a line). A missing
// .hg/requires means no requirements (Mercurial < 0.9.2); a missing
// .hg/store/requires under share-safe is an error.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Requirement names. Keep in sync with mercurial/requirements.py.
const (
	ReqGeneralDelta      = "generaldelta"
	ReqDotencode         = "dotencode"
	ReqStore             = "store"
	ReqFncache           = "fncache"
	ReqDirstateTracked   = "dirstate-tracked-key-v1"
	ReqDirstateV2        = "dirstate-v2"
	ReqNarrow            = "narrowhg-experimental"
	ReqSparse            = "exp-sparse"
	ReqInternalPhase     = "internal-phase-2"
	ReqArchivedPhase     = "exp-archived-phase"
	ReqTreemanifest      = "treemanifest"
	ReqRevlogV1          = "revlogv1"
	ReqCompressionZstd   = "revlog-compression-zstd"
	ReqChangelogV2       = "exp-changelog-v2"
	ReqRevlogV2          = "exp-revlogv2.2"
	ReqSparseRevlog      = "sparserevlog"
	ReqCopiesSidedata    = "exp-copies-sidedata-changeset"
	ReqPersistentNodemap = "persistent-nodemap"
	ReqShared            = "shared"
	ReqRelShared         = "relshared"
	ReqShareSafe         = "share-safe"
	ReqBookmarksInStore  = "bookmarksinstore"
)

// supported is what hg 6.3 without extensions recognizes:
// localrepository._basesupported plus the exp-compression-* names
// gathersupportedrequirements derives from the compression engines (none,
// zlib, zstd). Keep in sync with mercurial/localrepo.py and
// mercurial/requirements.py. Sorted.
var supported = []string{
	ReqBookmarksInStore,
	ReqDirstateTracked,
	ReqDirstateV2,
	ReqDotencode,
	ReqArchivedPhase,
	ReqChangelogV2,
	"exp-compression-none",
	"exp-compression-zlib",
	"exp-compression-zstd",
	ReqCopiesSidedata,
	ReqRevlogV2,
	ReqSparse,
	ReqFncache,
	ReqGeneralDelta,
	ReqInternalPhase,
	ReqPersistentNodemap,
	ReqRelShared,
	ReqCompressionZstd,
	ReqRevlogV1,
	ReqShareSafe,
	ReqShared,
	ReqSparseRevlog,
	ReqStore,
	ReqTreemanifest,
}

// autoloaded are requirements whose extension hg 6.3 loads by itself
// when a repository needs it (localrepo.py makelocalrepository
// autoextensions), so hg opens such repositories. ("git" is in that list
// too, but its extension needs pygit2 and fails to load on a plain
// install, so hg refuses the requirement.) Their stores are ordinary
// revlogs: lfs marks the revisions it stores in its blob store with the
// EXTSTORED flag, which the revlog package refuses to read or add
// (revlog.FlagError: it has no lfs processor), as hg without lfs does;
// other revisions read as usual. Keep in sync with mercurial/localrepo.py.
var autoloaded = []string{"largefiles", "lfs"}

// unreadable are requirements Mercurial knows but hgfs does not read: a
// tree manifest (meta/ revlogs, manifest text per directory) and the
// experimental revlog v2 / changelog v2 formats (docket files, different
// index entries).
var unreadable = []string{ReqChangelogV2, ReqRevlogV2, ReqTreemanifest}

// SupportedRequirement reports whether Mercurial 6.3, without extensions
// configured, opens a repository with the requirement (including the
// extensions it loads automatically: largefiles, lfs).
func SupportedRequirement(name string) bool {
	_, ok := slices.BinarySearch(supported, name)
	return ok || slices.Contains(autoloaded, name)
}

// Requirements is a set of requirement names. The zero value is the empty
// set (a repository without .hg/requires).
type Requirements struct {
	names []string // sorted, unique
}

// NewRequirements returns the set of the given names.
func NewRequirements(names ...string) Requirements {
	n := slices.Clone(names)
	slices.Sort(n)
	return Requirements{names: slices.Compact(n)}
}

// ParseRequirements parses the contents of a requires file. It never
// fails: whether the names are valid is Check's business, as in hg.
func ParseRequirements(data []byte) Requirements {
	return NewRequirements(splitLines(string(data))...)
}

// splitLines is Python's bytes.splitlines: "\n", "\r\n" and "\r" end a
// line; a final unterminated line counts, an empty input has no lines.
func splitLines(s string) []string {
	var lines []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return lines
}

// Has reports whether name is in the set.
func (r Requirements) Has(name string) bool {
	_, ok := slices.BinarySearch(r.names, name)
	return ok
}

// List returns the names, sorted.
func (r Requirements) List() []string { return slices.Clone(r.names) }

// Len is the number of requirements.
func (r Requirements) Len() int { return len(r.names) }

// Union returns r plus the names of o.
func (r Requirements) Union(o Requirements) Requirements {
	return NewRequirements(append(slices.Clone(r.names), o.names...)...)
}

// Bytes is the requires file content Mercurial writes (scmutil.
// writerequires): sorted names, each followed by "\n".
func (r Requirements) Bytes() []byte {
	var b strings.Builder
	for _, n := range r.names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// String is the names joined by spaces.
func (r Requirements) String() string { return strings.Join(r.names, " ") }

// Check is localrepo.py ensurerequirementsrecognized: an unknown name
// that is empty or does not start with an ASCII letter or digit is
// ErrCorruptRequires; other unknown names give an *UnsupportedError.
func (r Requirements) Check() error {
	var missing []string
	for _, n := range r.names {
		if SupportedRequirement(n) {
			continue
		}
		if n == "" || !isAlnum(n[0]) {
			return ErrCorruptRequires
		}
		missing = append(missing, n)
	}
	if len(missing) > 0 {
		return &UnsupportedError{Missing: missing}
	}
	return nil
}

// CheckReadable returns an *UnsupportedError with Hgfs set if the
// repository uses a format Mercurial knows but hgfs does not read
// (treemanifest, exp-revlogv2.2, exp-changelog-v2). Call Check first.
func (r Requirements) CheckReadable() error {
	var missing []string
	for _, n := range r.names {
		if slices.Contains(unreadable, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return &UnsupportedError{Missing: missing, Hgfs: true}
	}
	return nil
}

func isAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// UnsupportedError reports requirements that cannot be honoured. Its
// Error is Mercurial's message for names hg does not know:
//
//	repository requires features unknown to this Mercurial: a b
//
// and, with Hgfs set (names hg knows but hgfs does not read):
//
//	repository requires features unsupported by hgfs: treemanifest
//
// Hint gives the matching "(hint: ...)" text. It wraps
// ErrUnsupportedRequirement.
type UnsupportedError struct {
	Missing []string // sorted
	Hgfs    bool     // known to Mercurial 6.3, not implemented by hgfs
}

func (e *UnsupportedError) Error() string {
	if e.Hgfs {
		return "repository requires features unsupported by hgfs: " + strings.Join(e.Missing, " ")
	}
	return "repository requires features unknown to this Mercurial: " + strings.Join(e.Missing, " ")
}

// Hint is the text of the hint line hg (or hgfs) prints under the abort.
func (e *UnsupportedError) Hint() string {
	if e.Hgfs {
		return "hgfs reads revlogv1 repositories with flat manifests; use hg for this one"
	}
	return "see https://mercurial-scm.org/wiki/MissingRequirement for more information"
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupportedRequirement }

// ReadRequirements reads repoRoot/.hg/requires and, with share-safe, the
// store's requires (in the share source for a shared repository), and
// checks the union as hg does (Requirements.Check). It does not check
// whether hgfs can read the repository; Open does.
func ReadRequirements(repoRoot string) (Requirements, error) {
	req, _, err := readRequirements(repoRoot)
	return req, err
}

// readRequirements also returns the share source's .hg directory ("" if
// the repository is not shared).
func readRequirements(repoRoot string) (Requirements, string, error) {
	hgDir := filepath.Join(repoRoot, ".hg")
	st, err := os.Stat(hgDir)
	if err != nil || !st.IsDir() {
		return Requirements{}, "", notRepositoryError(repoRoot)
	}
	shareDir := ""
	req, err := requirementsFS(os.DirFS(hgDir), repoRoot, func(relative bool) (fs.FS, error) {
		shareDir, err = sharedPath(hgDir, relative)
		if err != nil {
			return nil, err
		}
		return os.DirFS(shareDir), nil
	})
	if err != nil {
		return Requirements{}, "", err
	}
	return req, shareDir, nil
}

// requirementsFS reads the requirements of the .hg directory hg (label
// names the repository in errors). share opens the share source's .hg
// directory; without one a shared repository gives ErrShared.
func requirementsFS(hg fs.FS, label string, share func(relative bool) (fs.FS, error)) (Requirements, error) {
	req, err := readRequiresFile(hg, "requires", true)
	if err != nil {
		return Requirements{}, err
	}
	var src fs.FS
	if req.Has(ReqShared) || req.Has(ReqRelShared) {
		if share == nil {
			return Requirements{}, fmt.Errorf("%s: %w", label, ErrShared)
		}
		if src, err = share(req.Has(ReqRelShared)); err != nil {
			return Requirements{}, err
		}
	}
	if req.Has(ReqShareSafe) {
		storeBase := hg
		if src != nil {
			sreq, err := readRequiresFile(src, "requires", true)
			if err != nil {
				return Requirements{}, err
			}
			if !sreq.Has(ReqShareSafe) {
				return Requirements{}, fmt.Errorf("%s: share source does not support share-safe requirement", label)
			}
			storeBase = src
		}
		sreq, err := readRequiresFile(storeBase, "store/requires", false)
		if err != nil {
			return Requirements{}, err
		}
		req = req.Union(sreq)
	} else if src != nil {
		sreq, err := readRequiresFile(src, "requires", false)
		if err != nil {
			return Requirements{}, err
		}
		if sreq.Has(ReqShareSafe) {
			return Requirements{}, fmt.Errorf("%s: version mismatch: source uses share-safe functionality while the current share does not", label)
		}
	}
	if err := req.Check(); err != nil {
		return Requirements{}, err
	}
	return req, nil
}

// readRequiresFile reads one requires file; allowMissing treats a missing
// file as empty (vfs.tryread).
func readRequiresFile(fsys fs.FS, name string, allowMissing bool) (Requirements, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		if allowMissing && errors.Is(err, fs.ErrNotExist) {
			return Requirements{}, nil
		}
		return Requirements{}, fmt.Errorf("reading requirements: %w", err)
	}
	return ParseRequirements(data), nil
}

// sharedPath resolves .hg/sharedpath: the share source's .hg directory.
func sharedPath(hgDir string, relative bool) (string, error) {
	data, err := os.ReadFile(filepath.Join(hgDir, "sharedpath"))
	if err != nil {
		return "", fmt.Errorf("reading shared path: %w", err)
	}
	p := strings.TrimRight(string(data), "\n")
	if relative {
		p = filepath.Join(hgDir, p)
	}
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return "", fmt.Errorf(".hg/sharedpath points to nonexistent directory %s", p)
	}
	return p, nil
}

// workingDirRequirements are written to .hg/requires rather than the
// store's under share-safe (requirements.py WORKING_DIR_REQUIREMENTS).
// Keep in sync with mercurial/requirements.py.
var workingDirRequirements = []string{ReqSparse, ReqShared, ReqRelShared, ReqShareSafe, ReqDirstateTracked, ReqDirstateV2}

// streamFixedRequirements describe the store format a stream clone
// copies verbatim, so the clone must take them from the source
// (requirements.py STREAM_FIXED_REQUIREMENTS). Keep in sync with
// mercurial/requirements.py.
var streamFixedRequirements = []string{
	ReqArchivedPhase, ReqBookmarksInStore, ReqChangelogV2, ReqCopiesSidedata,
	ReqGeneralDelta, ReqInternalPhase, ReqCompressionZstd, ReqRevlogV1,
	ReqRevlogV2, ReqSparseRevlog, ReqTreemanifest,
}

// DummyChangelog is what hg writes as .hg/00changelog.i of every new
// repository with a store, so that clients from before requirements
// fail on it (localrepo.py createrepository). Keep in sync with
// mercurial/localrepo.py.
const DummyChangelog = "\x00\x00\xff\xff dummy changelog to prevent using the old repo layout"

// DefaultRequirements is what `hg init` of Mercurial 6.3 (with zstd, as
// Debian's is built) writes without configuration.
func DefaultRequirements() Requirements {
	return NewRequirements(ReqDotencode, ReqFncache, ReqGeneralDelta, ReqCompressionZstd,
		ReqRevlogV1, ReqShareSafe, ReqSparseRevlog, ReqStore)
}

// Streamed is the part of r a stream clone sends (streamclone.py
// streamed_requirements): r ∩ STREAM_FIXED_REQUIREMENTS.
func (r Requirements) Streamed() Requirements {
	var out []string
	for _, n := range r.names {
		if slices.Contains(streamFixedRequirements, n) {
			out = append(out, n)
		}
	}
	return NewRequirements(out...)
}

// NewStreamCloneRequirements is the requirement set of a repository
// created by a stream clone (streamclone.py
// new_stream_clone_requirements): the local defaults minus the
// stream-fixed ones, plus what the stream says.
func NewStreamCloneRequirements(defaults, streamed Requirements) Requirements {
	var out []string
	for _, n := range defaults.names {
		if !slices.Contains(streamFixedRequirements, n) {
			out = append(out, n)
		}
	}
	return NewRequirements(append(out, streamed.names...)...)
}

// Split divides r between .hg/requires and .hg/store/requires as hg
// writes them (scmutil.py filterrequirements): with share-safe the
// working-directory requirements go to .hg/requires and the rest to the
// store; without it everything goes to .hg/requires and hasStore is false.
func (r Requirements) Split() (wdir, store Requirements, hasStore bool) {
	if !r.Has(ReqShareSafe) {
		return r, Requirements{}, false
	}
	var w, s []string
	for _, n := range r.names {
		if slices.Contains(workingDirRequirements, n) {
			w = append(w, n)
		} else {
			s = append(s, n)
		}
	}
	return NewRequirements(w...), NewRequirements(s...), true
}
