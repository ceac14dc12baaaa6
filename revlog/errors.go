package revlog

import (
	"errors"
	"fmt"
	"strings"
)

// Errors are grouped by what the caller can do about them.
var (
	// ErrCorrupt reports bytes that contradict the revlog format: a
	// truncated index, a delta that points past its base, a chunk that does
	// not decompress, a node hash that does not match its text. It is always
	// carried by a *CorruptError naming the file and revision.
	ErrCorrupt = errors.New("corrupted revlog")

	// ErrUnsupported reports a well-formed file in a format or with a
	// feature this package does not read (revlog v0, revlogv2, changelogv2,
	// unknown header or revision flags, revision flags whose processor
	// comes from an extension (*FlagError), unknown compression engines).
	ErrUnsupported = errors.New("unsupported revlog")

	// ErrNotFound reports a node or hex prefix that matches no revision.
	ErrNotFound = errors.New("revision not found")

	// ErrAmbiguous reports a hex prefix that matches several revisions.
	ErrAmbiguous = errors.New("ambiguous revision prefix")

	// ErrCensored reports a revision whose content was removed by
	// `hg censor`: its stored text is a tombstone that does not hash to its
	// node. hg verify accepts such revisions; reading them fails as in hg.
	ErrCensored = errors.New("censored revision")

	// ErrBadDelta reports a malformed delta: a truncated hunk, hunks out
	// of order or overlapping, a hunk beyond the text it applies to.
	// Revision wraps it in a *CorruptError (so ErrCorrupt holds too).
	ErrBadDelta = errors.New("invalid delta")

	// ErrIntegrity reports a text that does not hash to its node (hg's
	// "integrity check failed"). It is carried by an *IntegrityError
	// inside a *CorruptError, so ErrCorrupt holds too.
	ErrIntegrity = errors.New("integrity check failed")
)

// IntegrityError is a revision whose text does not hash to its node, as
// revlog.py checkhash finds it.
type IntegrityError struct {
	File string // revlog index file name as given to Open
	Rev  int
	Node Node
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("integrity check failed on %s:%d (node %s)", e.File, e.Rev, e.Node.Short())
}

// Unwrap makes errors.Is(err, ErrIntegrity) hold.
func (e *IntegrityError) Unwrap() error { return ErrIntegrity }

// CorruptError locates a corruption. Rev is -1 when the problem is not tied
// to one revision, Offset -1 when no byte offset applies.
type CorruptError struct {
	File   string // revlog file name as given to Open (or its .d)
	Rev    int
	Offset int64
	Err    error // what is wrong
}

func (e *CorruptError) Error() string {
	s := "corrupted revlog " + e.File
	if e.Rev >= 0 {
		s += fmt.Sprintf(" rev %d", e.Rev)
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at offset %d", e.Offset)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap makes errors.Is(err, ErrCorrupt) hold, and exposes the cause.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// HeaderError reports an index header hg refuses too: an unknown
// version, or flags its version does not have. Its message is hg's
// (revlog.py, _loadindex), so that the command line prints what hg
// prints. Revlog names the revlog as hg does (its display id): the
// index's name without ".i", which for a filelog is its store name
// (encoded, under data/) until the caller that knows the tracked path
// puts that there, as hg names filelogs (repo.FileWithIndex). It wraps
// ErrUnsupported.
type HeaderError struct {
	What   string // "unknown version (29282) in": the message before "revlog"
	Revlog string
}

func (e *HeaderError) Error() string { return e.What + " revlog " + e.Revlog }

// Unwrap makes errors.Is(err, ErrUnsupported) hold.
func (e *HeaderError) Unwrap() error { return ErrUnsupported }

// displayID is hg's name for the revlog whose index is name.
func displayID(name string) string { return strings.TrimSuffix(name, ".i") }

// FlagError reports a revision carrying a flag whose processor hg takes
// from an extension: ellipsis (narrow) or extstored (lfs). This package
// has neither processor; as hg without the extension, it refuses to read
// or add such a revision, whatever its text. (With the processor, hg
// would not check the raw text against the node, so honouring the flag
// would let a bundle or a server forge history under existing nodes.)
// It wraps ErrUnsupported. Its message and hint are hg's, so that the
// command line prints what hg prints.
type FlagError struct {
	File string // revlog index file name
	Rev  int    // the revision (for a revision being added: Len())
	Flag uint16 // the first such flag, in hg's order (REVIDX_FLAGS_ORDER)
}

func (e *FlagError) Error() string {
	return fmt.Sprintf("missing processor for flag '%#x'", e.Flag)
}

// Unwrap makes errors.Is(err, ErrUnsupported) hold.
func (e *FlagError) Unwrap() error { return ErrUnsupported }

// Hint is the hint hg 7 gives with the message (none for ellipsis).
func (e *FlagError) Hint() string {
	if e.Flag == FlagExtStored {
		return "the lfs extension must be enabled"
	}
	return ""
}
