package exchange

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hgfs/hgfs/store"
)

// Init creates an empty repository at root (which may exist and must not
// hold .hg) with requirements reqs and, when hgrc is not empty, that
// .hg/hgrc, as localrepo.createrepository does: the store directory, the
// dummy .hg/00changelog.i, and the requirements written last.
func Init(root string, reqs []string, hgrc string) error {
	hg := filepath.Join(root, ".hg")
	if err := os.MkdirAll(root, 0o777); err != nil {
		return err
	}
	if err := os.Mkdir(hg, 0o777); err != nil {
		return err
	}
	req := store.NewRequirements(reqs...)
	if req.Has(store.ReqStore) {
		if err := os.Mkdir(filepath.Join(hg, "store"), 0o777); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(hg, "00changelog.i"), []byte(store.DummyChangelog), 0o666); err != nil {
		return err
	}
	if hgrc != "" {
		if err := os.WriteFile(filepath.Join(hg, "hgrc"), []byte(hgrc), 0o666); err != nil {
			return err
		}
	}
	wc, st, hasStore := req.Split()
	if hasStore {
		if !req.Has(store.ReqStore) {
			return fmt.Errorf("share-safe requires the store requirement")
		}
		if err := os.WriteFile(filepath.Join(hg, "store", "requires"), st.Bytes(), 0o666); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(hg, "requires"), wc.Bytes(), 0o666)
}
