package store

import "errors"

// Sentinel errors. Functions wrap them with %w and context (the path or
// name involved); test with errors.Is.
var (
	// ErrNotRepository: the directory has no .hg directory.
	ErrNotRepository = errors.New("repository not found")

	// ErrUnsupportedRequirement is wrapped by *UnsupportedError: the
	// repository needs a feature hg 6.3 does not know, or one hgfs does
	// not read.
	ErrUnsupportedRequirement = errors.New("unsupported repository requirement")

	// ErrCorruptRequires: a requirement that is empty or does not start
	// with a letter or digit (hg: ".hg/requires file is corrupt").
	ErrCorruptRequires = errors.New(".hg/requires file is corrupt")

	// ErrCorruptFncache: the fncache file does not end with a newline,
	// has an empty entry, or names a file that is not a revlog.
	ErrCorruptFncache = errors.New("corrupt fncache")

	// ErrUndecodable: an on-disk name the reversible encoding cannot have
	// produced (hg: "undecodable revlog name").
	ErrUndecodable = errors.New("undecodable revlog name")

	// ErrShared: OpenFS was given a shared repository, whose store lives
	// outside the .hg directory it can read.
	ErrShared = errors.New("shared repository: the store lives elsewhere")

	// ErrLocked: the repository lock stayed held by someone else until
	// Lock's timeout (wrapped by *LockError).
	ErrLocked = errors.New("repository is locked")

	// ErrBadStoreName: an untrusted store path (from a stream) that is
	// not a clean relative path inside the store.
	ErrBadStoreName = errors.New("invalid store file name")
)

// notRepositoryError reads as hg's "repository X not found" and matches
// ErrNotRepository.
type notRepositoryError string

func (e notRepositoryError) Error() string        { return "repository " + string(e) + " not found" }
func (e notRepositoryError) Is(target error) bool { return target == ErrNotRepository }
