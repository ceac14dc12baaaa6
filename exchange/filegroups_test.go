package exchange

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// TestFileWorkersSameStore applies the real-history corpus bundle (441
// files, up to hundreds of revisions each) into empty repositories with
// the file groups on the session's goroutine and on four workers, with
// small flush batches so that flushes happen while groups are in
// flight: the stores must be byte for byte the same (every revlog, the
// fncache, the phase roots), and pass hg verify.
func TestFileWorkersSameStore(t *testing.T) {
	testenv.HgPath(t)
	bundle := testenv.Corpus(t, testenv.CorpusHistory)
	dir := t.TempDir()
	var stores []map[string]string
	for _, workers := range []int{1, 4} {
		root := filepath.Join(dir, "w"+string(rune('0'+workers)))
		if err := os.Mkdir(root, 0o777); err != nil {
			t.Fatal(err)
		}
		testenv.Hg(t, root, "init")
		recovered, err := applyBundleFile(t, root, bundle, Options{FileWorkers: workers, WriteBatch: 64 << 10})
		if err != nil || recovered != nil {
			t.Fatalf("%d workers: %v %v", workers, err, recovered)
		}
		testenv.Hg(t, root, "verify", "-q")
		stores = append(stores, storeFiles(t, root))
	}
	a, b := stores[0], stores[1]
	if len(a) < 400 {
		t.Fatalf("only %d files in the store", len(a))
	}
	sameFiles(t, a, b, "differs between one and four workers", "only with four workers")
}
