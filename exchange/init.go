package exchange

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hgfs/hgfs/streamclone"
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
	has := func(r string) bool {
		for _, x := range reqs {
			if x == r {
				return true
			}
		}
		return false
	}
	if has("store") {
		if err := os.Mkdir(filepath.Join(hg, "store"), 0o777); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(hg, "00changelog.i"), []byte(streamclone.DummyChangelog), 0o666); err != nil {
		return err
	}
	if hgrc != "" {
		if err := os.WriteFile(filepath.Join(hg, "hgrc"), []byte(hgrc), 0o666); err != nil {
			return err
		}
	}
	wc, st := streamclone.RequiresFiles(reqs)
	if st != "" {
		if !has("store") {
			return fmt.Errorf("share-safe requires the store requirement")
		}
		if err := os.WriteFile(filepath.Join(hg, "store", "requires"), []byte(st), 0o666); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(hg, "requires"), []byte(wc), 0o666)
}
