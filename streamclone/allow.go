package streamclone

// Whether a repository is streamed at all, and with its obsolescence
// markers: the checks hg makes before generating a stream, for a server
// (hgfs serve) and for `hg bundle -t 'none-v2;stream=v2'` alike.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/hgfs/hgfs/store"
)

// Refusal is a stream hg refuses to generate: the abort message and hint
// it gives (keep in sync with bundle2.addpartbundlestream2 in
// mercurial/bundle2.py).
type Refusal struct{ Msg, Hint string }

func (e *Refusal) Error() string { return e.Msg }

var (
	// ErrNotAllowed: Allowed is false. hg 7 shortens the hint to "the
	// client seems buggy"; this is hg 6.3's.
	ErrNotAllowed = &Refusal{
		Msg:  "stream data requested but server does not allow this feature",
		Hint: "well-behaved clients should not be requesting stream data from servers not advertising it; the client may be buggy",
	}
	// ErrObsMarkersRefused: the store has obsolescence markers and the
	// receiver accepts none.
	ErrObsMarkersRefused = &Refusal{Msg: "server has obsolescence markers, but client cannot receive them via stream clone"}
)

// Allowed is streamclone.allowservergeneration: streaming must be enabled
// (server.uncompressed, given as uncompressed), and secret changesets,
// which a copy of the store cannot hide, forbid it unless
// server.uncompressedallowsecret (allowSecret).
func Allowed(st *store.Store, uncompressed, allowSecret bool) (bool, error) {
	if !uncompressed {
		return false, nil
	}
	secret, err := st.HasSecret()
	if err != nil {
		return false, err
	}
	return !secret || allowSecret, nil
}

// StreamObsMarkers is addpartbundlestream2's obsstore check for a
// receiver accepting the marker formats accepted ("V0", "V1"): whether
// the stream carries the obsstore (GenerateOptions.ObsMarkers). A store
// with markers is refused (ErrObsMarkersRefused) to a receiver accepting
// none, and streamed without them to one that does not accept their
// format.
func StreamObsMarkers(st *store.Store, accepted []string) (bool, error) {
	f, err := st.FS().Open("obsstore")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	// The version byte and at least one more: hg's obsstore is false
	// when the file holds no marker.
	var head [2]byte
	if n, err := io.ReadFull(f, head[:]); n < len(head) {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = nil
		}
		return false, err
	}
	if len(accepted) == 0 {
		return false, ErrObsMarkersRefused
	}
	return slices.Contains(accepted, fmt.Sprintf("V%d", head[0])), nil
}
