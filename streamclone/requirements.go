package streamclone

import (
	"sort"
	"strings"

	"github.com/hgfs/hgfs/store"
)

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
