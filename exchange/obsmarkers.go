package exchange

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/internal/sysio"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/wireproto"
)

// Obsolescence markers, as bundle2.handleobsmarker and obsolete.obsstore
// add them: markers not already in the obsstore are appended to it (a new
// file starts with the version byte of format 1), the file journaled with
// its size before, so a rollback truncates it. Markers are added only
// when the repository enables creating them (Options.CreateMarkers,
// obsolete.isenabled); otherwise a mandatory part aborts and an advisory
// one is ignored.

// ErrMarkersDisabled is hg's abort for markers arriving in a repository
// that does not create them.
var ErrMarkersDisabled = errors.New("creating obsolete markers is not enabled on this repo")

// maxObsmarkersPart bounds an obsmarkers part held in memory: some 2.5
// million markers of a typical size.
const maxObsmarkersPart = 256 << 20

// obsState is the obsstore as the session sees it.
type obsState struct {
	size    int64           // bytes on disk when loaded
	version int             // format of the file (-1: empty)
	known   map[string]bool // Key of every marker, stored or added
	hasSucc map[string]bool // precursors with a stored marker
	precs   map[string]bool // precursors with a stored or added marker
	all     []store.ObsMarker
	added   []store.ObsMarker
}

// loadObsstore reads the obsstore once.
func (s *Session) loadObsstore() error {
	if s.obs != nil {
		return nil
	}
	data, err := fs.ReadFile(s.st.FS(), s.st.Encode("obsstore"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	version, markers, err := store.ParseObsstore(data)
	if err != nil {
		return fmt.Errorf("obsstore: %w", err)
	}
	o := &obsState{size: int64(len(data)), version: version, known: map[string]bool{}, hasSucc: map[string]bool{}, precs: map[string]bool{}, all: markers}
	for i := range markers {
		o.known[markers[i].Key()] = true
		o.hasSucc[string(markers[i].Prec)] = true
		o.precs[string(markers[i].Prec)] = true
	}
	s.obs = o
	return nil
}

// applyObsmarkers is bundle2.handleobsmarker.
func (s *Session) applyObsmarkers(mandatory bool, payload io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(payload, maxObsmarkersPart+1))
	if err != nil {
		return err
	}
	if len(data) > maxObsmarkersPart {
		return fmt.Errorf("obsmarkers part larger than %d bytes", maxObsmarkersPart)
	}
	if !mandatory && !s.opt.CreateMarkers {
		s.debug("ignoring obsolescence markers, feature not enabled\n")
		return nil
	}
	if len(data) == 0 {
		return fmt.Errorf("%w: empty obsmarkers part", store.ErrObsstore)
	}
	_, markers, err := store.ParseObsstore(data)
	if err != nil {
		return err
	}
	return s.AddObsMarkers(markers)
}

// AddObsMarkers adds the markers not already stored (obsstore.add).
func (s *Session) AddObsMarkers(markers []store.ObsMarker) error {
	if !s.opt.CreateMarkers {
		return ErrMarkersDisabled
	}
	if err := s.loadObsstore(); err != nil {
		return err
	}
	for _, m := range markers {
		k := m.Key()
		if s.obs.known[k] {
			continue
		}
		s.obs.known[k] = true
		s.obs.added = append(s.obs.added, m)
		s.obs.all = append(s.obs.all, m)
		s.obs.precs[string(m.Prec)] = true
	}
	return nil
}

// writeObsstore appends the added markers to the obsstore.
func (s *Session) writeObsstore() error {
	if s.obs == nil || len(s.obs.added) == 0 {
		return nil
	}
	version := s.obs.version
	if s.obs.size == 0 {
		version = store.ObsFormat1
	}
	data, err := store.EncodeObsMarkers(s.obs.added, s.obs.size == 0, version)
	if err != nil {
		return err
	}
	if err := s.tx.Add("obsstore", s.obs.size); err != nil {
		return err
	}
	// Appended in place: another repository's hard link must not see it.
	path := filepath.Join(s.st.Dir, s.st.Encode("obsstore"))
	if err := sysio.BreakLink(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, s.obs.size)
	return errors.Join(err, f.Close())
}

// obsSummary is scmutil's reportobsoleted: the new markers, and the
// changesets that were there before and are now obsolete by them alone
// (obsutil.getobsoleted).
func (s *Session) obsSummary(phase []int) []string {
	if s.obs == nil || len(s.obs.added) == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("%d new obsolescence markers\n", len(s.obs.added))}
	seen := map[int]bool{}
	obsoleted := 0
	for _, m := range s.obs.added {
		if len(m.Prec) != revlog.NodeLen {
			continue
		}
		r, ok := s.cl.Rev(revlog.Node(m.Prec))
		if !ok || r >= s.origLen || seen[r] {
			continue
		}
		seen[r] = true
		if phase[r] != Public && !s.obs.hasSucc[string(m.Prec)] {
			obsoleted++
		}
	}
	if obsoleted > 0 {
		out = append(out, fmt.Sprintf("obsoleted %d changesets\n", obsoleted))
	}
	return out
}

// instabilities counts the orphan and phase-divergent changesets among
// the first n revisions with phases phase (obsolete.getrevs "orphan" and
// "phasedivergent"; obsolete: a mutable changeset some marker rewrote).
func (s *Session) instabilities(n int, phase []int) (orphan, phaseDivergent int) {
	type pred struct {
		prec  string
		flags uint16
	}
	preds := map[string][]pred{}
	for _, m := range s.obs.all {
		for _, sc := range m.Succs {
			preds[string(sc)] = append(preds[string(sc)], pred{string(m.Prec), m.Flags})
		}
	}
	obsolete := make([]bool, n)
	unstable := make([]bool, n)
	for r := 0; r < n; r++ {
		nd := s.cl.Node(r)
		obsolete[r] = phase[r] != Public && s.obs.precs[string(nd[:])]
	}
	for r := 0; r < n; r++ {
		if phase[r] == Public || obsolete[r] {
			continue
		}
		e := s.cl.Entry(r)
		for _, p := range []int{e.P1, e.P2} {
			if p >= 0 && (obsolete[p] || unstable[p]) {
				unstable[r] = true
			}
		}
		if unstable[r] {
			orphan++
		}
		// obsutil.allpredecessors, markers fixing a divergence aside.
		nd := s.cl.Node(r)
		seen := map[string]bool{string(nd[:]): true}
		todo := []string{string(nd[:])}
		for len(todo) > 0 {
			cur := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if len(cur) == revlog.NodeLen {
				if pr, ok := s.cl.Rev(revlog.Node([]byte(cur))); ok && pr < n && phase[pr] == Public {
					phaseDivergent++
					break
				}
			}
			for _, p := range preds[cur] {
				if p.flags&store.ObsFlagBumpedFix == 0 && !seen[p.prec] {
					seen[p.prec] = true
					todo = append(todo, p.prec)
				}
			}
		}
	}
	return orphan, phaseDivergent
}

// instabilityWarnings is scmutil's reportnewinstabilities: what the
// transaction made orphan or phase-divergent. (Content divergence, which
// needs obsutil.successorssets, is not reported.)
func (s *Session) instabilityWarnings(phase []int) []string {
	if !s.opt.CreateMarkers || s.obs == nil {
		return nil
	}
	orphan, bumped := s.instabilities(s.cl.Len(), phase)
	var out []string
	if d := orphan - s.orphanBefore; d > 0 {
		out = append(out, fmt.Sprintf("%d new orphan changesets\n", d))
	}
	if d := bumped - s.bumpedBefore; d > 0 {
		out = append(out, fmt.Sprintf("%d new phase-divergent changesets\n", d))
	}
	return out
}

// warnReadonlyObsstore is obsolete.makestore's warning for a repository
// that has markers but does not create them (hg gives it whenever it
// reads the obsstore, which an unbundle or pull does).
func (s *Session) warnReadonlyObsstore() error {
	fi, err := fs.Stat(s.st.FS(), s.st.Encode("obsstore"))
	if err != nil || fi.Size() <= 1 {
		return nil // no markers (an unreadable file fails where it is read)
	}
	if err := s.loadObsstore(); err != nil {
		return err
	}
	s.warn("obsolete feature not enabled but %d markers found!\n", len(s.obs.all))
	return nil
}

// obsolete reports whether rev is obsolete: mutable, and the precursor
// of a marker.
func (s *Session) obsolete(rev int, phase []int) bool {
	if s.obs == nil || phase[rev] == Public {
		return false
	}
	n := s.cl.Node(rev)
	return s.obs.precs[string(n[:])]
}

// hiddenRevs is hg's visible view of the repository as the session wrote
// it (repoview.computehidden, through package repo): nil when no marker
// is there to hide anything.
func (s *Session) hiddenRevs() []bool {
	if s.obs == nil || len(s.obs.all) == 0 {
		return nil
	}
	r, err := repo.Open(s.root)
	if err != nil {
		return nil // the summary is best effort; the transaction is done
	}
	defer r.Close()
	hidden := make([]bool, s.cl.Len())
	for rev := range hidden {
		hidden[rev] = r.Hidden(rev)
	}
	return hidden
}

// pullObsmarkersListkeys is exchange._pullobsolete: the markers of the
// "obsolete" pushkey namespace (format 0, base85, in "dumpN" keys), for a
// server whose bundle2 capabilities do not offer them.
func (s *Session) pullObsmarkersListkeys(ctx context.Context, peer wireproto.Peer) error {
	s.debug("fetching remote obsolete markers\n")
	keys, err := peer.ListKeys(ctx, "obsolete")
	if err != nil {
		return err
	}
	if _, ok := keys["dump0"]; !ok {
		return nil
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		if strings.HasPrefix(k, "dump") {
			names = append(names, k)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	var markers []store.ObsMarker
	for _, k := range names {
		data, err := b85decode(keys[k])
		if err != nil {
			return fmt.Errorf("obsolete markers %s: %w", k, err)
		}
		_, ms, err := store.ParseObsstore(data)
		if err != nil {
			return fmt.Errorf("obsolete markers %s: %w", k, err)
		}
		markers = append(markers, ms...)
	}
	if len(markers) == 0 {
		return nil
	}
	return s.AddObsMarkers(markers)
}

// b85alphabet is Mercurial's base85 (pure/base85.py, as Python's
// base64.b85encode).
const b85alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// b85decode is util.b85decode: groups of 5 characters give 4 bytes; a
// final partial group is padded and its bytes cut.
func b85decode(text string) ([]byte, error) {
	var dec [256]int16
	for i := range dec {
		dec[i] = -1
	}
	for i := 0; i < len(b85alphabet); i++ {
		dec[b85alphabet[i]] = int16(i)
	}
	out := make([]byte, 0, (len(text)+4)/5*4)
	for i := 0; i < len(text); i += 5 {
		chunk := text[i:min(i+5, len(text))]
		var acc uint64
		for j := 0; j < len(chunk); j++ {
			d := dec[chunk[j]]
			if d < 0 {
				return nil, fmt.Errorf("bad base85 character at position %d", i+j)
			}
			acc = acc*85 + uint64(d)
		}
		if acc > math.MaxUint32 {
			return nil, fmt.Errorf("base85 overflow in hunk starting at byte %d", i)
		}
		if cl := len(chunk); cl < 5 {
			for k := cl; k < 5; k++ {
				acc *= 85
			}
			if cl > 1 {
				acc += 0xFFFFFF >> ((cl - 2) * 8)
			}
			out = binary.BigEndian.AppendUint32(out, uint32(acc))
			out = out[:len(out)-(5-cl)]
			break
		}
		out = binary.BigEndian.AppendUint32(out, uint32(acc))
	}
	return out, nil
}
