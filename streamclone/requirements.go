package streamclone

import (
	"sort"
	"strings"

	"github.com/hgfs/hgfs/store"
)

// DefaultRequirements returns the requirements `hg init` of Mercurial 6.3
// gives a new repository with default configuration (zstd available), the
// "default_requirements" new_stream_clone_requirements starts from.
// Keep in sync with mercurial/localrepo.py newreporequirements.
func DefaultRequirements() []string {
	return []string{"dotencode", "fncache", "generaldelta", "revlog-compression-zstd",
		"revlogv1", "share-safe", "sparserevlog", "store"}
}

// streamFixed reports requirements a stream clone takes from the source
// instead of local defaults. Keep in sync with mercurial/requirements.py
// STREAM_FIXED_REQUIREMENTS.
func streamFixed(r string) bool {
	switch r {
	case "exp-archived-phase", "bookmarksinstore", "exp-changelog-v2",
		"exp-copies-sidedata-changeset", "generaldelta", "internal-phase-2",
		"revlog-compression-zstd", "revlogv1", "exp-revlogv2.2", "sparserevlog",
		"treemanifest":
		return true
	}
	return false
}

// workingDirRequirement reports requirements kept in .hg/requires when
// share-safe splits them. Keep in sync with mercurial/requirements.py
// WORKING_DIR_REQUIREMENTS.
func workingDirRequirement(r string) bool {
	switch r {
	case "exp-sparse", "shared", "relshared", "share-safe",
		"dirstate-tracked-key-v1", "dirstate-v2":
		return true
	}
	return false
}

// NewStreamCloneRequirements combines local defaults with the requirements
// a stream carries, as streamclone.new_stream_clone_requirements does.
// The result is sorted.
func NewStreamCloneRequirements(defaults, streamed []string) []string {
	set := map[string]bool{}
	for _, r := range defaults {
		if !streamFixed(r) {
			set[r] = true
		}
	}
	for _, r := range streamed {
		set[r] = true
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// MissingRequirements returns, sorted, the requirements of a stream
// (streamreqs, or a stream's own list) that an apply here refuses: those
// Mercurial 6.3 does not know, such as hg 7's delta-info-revlog. A client
// checks them before asking for a stream, as
// streamclone.canperformstreamclone does against repo.supported.
func MissingRequirements(reqs []string) []string {
	var missing []string
	for _, r := range reqs {
		if !store.SupportedRequirement(r) {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	return missing
}

// MissingRequirementsError is a stream needing requirements an apply here
// refuses. Its Error is hg's (streamclone.applybundlev2); it wraps
// ErrUnsupportedRequirement.
type MissingRequirementsError struct {
	Missing []string // sorted
}

func (e *MissingRequirementsError) Error() string {
	return "unable to apply stream clone: unsupported format: " + strings.Join(e.Missing, ", ")
}

func (e *MissingRequirementsError) Unwrap() error { return ErrUnsupportedRequirement }

// checkSupported refuses requirements this implementation cannot handle.
func checkSupported(reqs []string) error {
	if missing := MissingRequirements(reqs); len(missing) > 0 {
		return &MissingRequirementsError{Missing: missing}
	}
	return nil
}

// splitRequirements splits a comma-separated requirements list; empty
// input is no requirement (bundle2.handlestreamv2bundle).
func splitRequirements(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// requiresFiles returns the contents of .hg/requires and, with share-safe,
// .hg/store/requires (scmutil.filterrequirements + writerequires: sorted,
// one per line).
func requiresFiles(reqs []string) (wc, st string) {
	var w, s []string
	shareSafe := false
	for _, r := range reqs {
		if r == "share-safe" {
			shareSafe = true
		}
	}
	for _, r := range reqs {
		if shareSafe && !workingDirRequirement(r) {
			s = append(s, r)
		} else {
			w = append(w, r)
		}
	}
	join := func(l []string) string {
		if len(l) == 0 {
			return ""
		}
		sort.Strings(l)
		return strings.Join(l, "\n") + "\n"
	}
	return join(w), join(s)
}

func hasReq(reqs []string, r string) bool {
	for _, x := range reqs {
		if x == r {
			return true
		}
	}
	return false
}

// RequiresFiles returns the contents of .hg/requires and, with share-safe,
// .hg/store/requires ("" when that file is not written) for a new
// repository with reqs.
func RequiresFiles(reqs []string) (wc, st string) { return requiresFiles(reqs) }

// DummyChangelog is what hg writes as .hg/00changelog.i in every new
// repository so that clients from before requirements fail on it.
const DummyChangelog = dummyChangelog
