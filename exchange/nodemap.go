package exchange

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/store"
)

// Persistent nodemaps (requirement persistent-nodemap), as
// revlogutils/nodemap.py persist_nodemap keeps them without Rust: at the
// end of a transaction that added revisions to the changelog or the
// manifest (or split either out of its index), once the revlog is not
// inline, its whole trie is written to a new data file <radix>-<uid>.nd
// (journaled as a new file, so an abort or `hg recover` removes it) and
// its docket <radix>.n is rewritten (backed up, so a rollback restores
// the old one); once the transaction is closed the other data files of
// the revlog are removed.

// nodemapRevlog is a revlog hg keeps a nodemap for, as the session began.
type nodemapRevlog struct {
	w       *revlog.Writer
	radix   string // "00changelog"
	origLen int
	inline  bool
}

func (s *Session) nodemapRevlogs() []nodemapRevlog {
	if !s.st.Requirements.Has(store.ReqPersistentNodemap) {
		return nil
	}
	return []nodemapRevlog{
		{s.cl, "00changelog", s.origLen, s.clInline},
		{s.ml, "00manifest", s.mlOrigLen, s.mlInline},
	}
}

// writeNodemaps writes the nodemaps of the revlogs the session changed,
// after their writers are closed. The returned cleanup removes the old
// data files; call it once the transaction is closed.
func (s *Session) writeNodemaps() (cleanup func(), err error) {
	var olds []string
	for _, nr := range s.nodemapRevlogs() {
		w := nr.w
		if w.Inline() || (w.Len() == nr.origLen && !nr.inline) {
			continue // too small for a nodemap, or unchanged
		}
		n := w.Len()
		data, err := revlog.NodemapData(n, w.Node)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", nr.radix, err)
		}
		var uid [4]byte
		if _, err := rand.Read(uid[:]); err != nil {
			return nil, err
		}
		d := &revlog.NodemapDocket{UID: hex.EncodeToString(uid[:]), TipRev: n - 1, TipNode: w.Node(n - 1), DataLength: int64(len(data))}
		dataName := revlog.NodemapDataName(nr.radix, d.UID)
		if err := s.tx.Add(dataName, 0); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(s.st.Dir, s.st.Encode(dataName)), data, 0o666); err != nil {
			return nil, err
		}
		if err := s.replaceFile(nr.radix+".n", d.Encode()); err != nil {
			return nil, err
		}
		others, err := otherNodemapData(s.st.Dir, nr.radix, dataName)
		if err != nil {
			return nil, err
		}
		olds = append(olds, others...)
	}
	return func() {
		for _, p := range olds {
			// As hg's tryunlink: a file already gone is no failure.
			os.Remove(p)
		}
	}, nil
}

// otherNodemapData lists the data files of radix other than keep
// (nodemap.py _other_rawdata_filepath), as paths.
func otherNodemapData(dir, radix, keep string) ([]string, error) {
	pat := regexp.MustCompile(`^` + regexp.QuoteMeta(radix) + `-[0-9a-f]+\.nd$`)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); pat.MatchString(n) && n != keep {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}
