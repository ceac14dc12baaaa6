package txn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/store"
	"github.com/hgfs/hgfs/testenv"
)

var tmpRoot string

// plainName is a tracked file name the tests may append to.
var plainName = regexp.MustCompile(`^[a-z0-9/._-]+$`)

// The crash child: TestMain re-executed with these variables set runs
// a transaction up to event number crashEnv and kills itself with
// SIGKILL, as a kill -9 of hgfs unbundle would.
const (
	childEnv = "HGFS_TXN_CHILD_ROOT" // repository to write (a copy of A)
	bEnv     = "HGFS_TXN_CHILD_B"    // the repository to turn it into
	crashEnv = "HGFS_TXN_CHILD_CRASH"
)

func TestMain(m *testing.M) {
	if root := os.Getenv(childEnv); root != "" {
		os.Exit(crashChild(root, os.Getenv(bEnv), os.Getenv(crashEnv)))
	}
	d, err := os.MkdirTemp("", "hgfs-txn-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	tmpRoot = d
	code := m.Run()
	os.RemoveAll(d)
	testenv.RemoveGenerated()
	os.Exit(code)
}

func crashChild(root, b, crash string) int {
	if b == "writer" {
		fmt.Fprintln(os.Stderr, "crash child:", writerChild(root))
		return 3
	}
	n, err := strconv.Atoi(crash)
	if err == nil {
		err = func() error {
			events := 0
			tick := func() {
				events++
				if events == n {
					killSelf()
				}
			}
			steps, err := plan(root, b)
			if err != nil {
				return err
			}
			tx, err := Begin(root, storeDirOf(root), "unbundle", 0)
			if err != nil {
				return err
			}
			tick()
			for _, s := range steps {
				if err := s.run(tx, tick); err != nil {
					return err
				}
			}
			tick() // the last crash point: everything written, not closed
			return fmt.Errorf("crash point %d is past the %d events", n, events)
		}()
	}
	fmt.Fprintln(os.Stderr, "crash child:", err)
	return 3
}

// runCrashChild runs the child against root and checks it died of SIGKILL.
func runCrashChild(t *testing.T, root, b string, crashAt int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+root, bEnv+"="+b, crashEnv+"="+strconv.Itoa(crashAt))
	out, err := cmd.CombinedOutput()
	if !killedBySIGKILL(err) {
		t.Fatalf("crash child at event %d: %v, not killed by SIGKILL\n%s", crashAt, err, out)
	}
}

func storeDirOf(root string) string {
	st, err := store.Open(root)
	if err != nil {
		panic(err) // generated repositories open
	}
	return st.Dir
}

// step is one write a changegroup application makes, turning a file of
// repository A into B's; run calls tick between its events.
type step struct {
	name   string
	events int
	run    func(tx *Tx, tick func()) error
}

// plan lists the steps turning the repository at a into b: revlogs
// (changelog, manifest, then files, as exchange applies them) appended
// to, created, or split; then fncache, phaseroots and bookmarks
// rewritten under backup.
func plan(a, b string) ([]step, error) {
	as := storeDirOf(a)
	logical, err := logicalNames(b)
	if err != nil {
		return nil, err
	}
	sa, err := snapshot(a)
	if err != nil {
		return nil, err
	}
	sb, err := snapshot(b)
	if err != nil {
		return nil, err
	}
	var names []string
	for k := range sb {
		if sa[k] != sb[k] {
			names = append(names, k)
		}
	}
	for k := range sa {
		if _, ok := sb[k]; !ok {
			return nil, fmt.Errorf("%s is gone in B", k)
		}
	}
	rank := func(n string) int {
		switch {
		case strings.HasPrefix(n, "00changelog"):
			return 0
		case strings.HasPrefix(n, "00manifest"):
			return 1
		case strings.HasPrefix(n, plainPrefix):
			return 4
		case n == "fncache" || n == "phaseroots":
			return 3
		}
		return 2
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	done := map[string]bool{}
	for _, n := range names { // a split's .d is written by the .i's step
		if base, ok := strings.CutSuffix(n, ".i"); ok && sa[n] != "" && sa[base+".d"] == "" && sb[base+".d"] != "" {
			done[base+".d"] = true
		}
	}
	var steps []step
	for _, n := range names {
		if done[n] {
			continue
		}
		old, had := sa[n]
		nw := []byte(sb[n])
		switch {
		case strings.HasPrefix(n, plainPrefix):
			name := strings.TrimPrefix(n, plainPrefix)
			steps = append(steps, rewriteStep(Plain, name, nw))
		case n == "fncache" || n == "phaseroots":
			steps = append(steps, rewriteStep(Store, n, nw))
		case !had:
			steps = append(steps, appendStep(logical(n), filepath.Join(as, n), 0, nw))
		case strings.HasPrefix(string(nw), old):
			steps = append(steps, appendStep(logical(n), filepath.Join(as, n), int64(len(old)), nw[len(old):]))
		case strings.HasSuffix(n, ".i") && sb[n[:len(n)-2]+".d"] != "" && sa[n[:len(n)-2]+".d"] == "":
			d := n[:len(n)-2] + ".d"
			s, err := splitStep(logical(n), logical(d), filepath.Join(as, n), filepath.Join(as, d), int64(len(old)), nw, []byte(sb[d]))
			if err != nil {
				return nil, err
			}
			steps = append(steps, s)
		default:
			return nil, fmt.Errorf("%s changed in a way no writer does", n)
		}
	}
	return steps, nil
}

// logicalNames returns the mapping from on-disk store names of the
// repository at root to the logical names hg journals: through the
// fncache for hashed names, else by decoding.
func logicalNames(root string) (func(string) string, error) {
	st, err := store.Open(root)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if st.Layout.HasFncache() {
		entries, err := st.Fncache()
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			m[st.Encode(e)] = e
		}
	}
	return func(name string) string {
		if l, ok := m[name]; ok {
			return l
		}
		if st.Layout == store.LayoutBasic {
			return store.DecodeDir(name)
		}
		l, err := store.DecodeFilename(name)
		if err != nil {
			panic(fmt.Sprintf("undecodable store name %q", name))
		}
		return l
	}, nil
}

// appendStep is a revlog writer's append: journal entry, then the
// bytes in two writes.
func appendStep(name, path string, offset int64, data []byte) step {
	return step{name: name, events: 3, run: func(tx *Tx, tick func()) error {
		if err := tx.RevlogJournal(name).Add(name, offset); err != nil {
			return err
		}
		tick() // buffered: a crash here loses the line and no byte
		if err := tx.FlushJournal(); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		h := len(data) / 2
		if _, err := f.Write(data[:h]); err != nil {
			return err
		}
		tick()
		if _, err := f.Write(data[h:]); err != nil {
			return err
		}
		tick()
		return nil
	}}
}

// rewriteStep is hg's fncache/phaseroots/bookmarks write.
func rewriteStep(loc Location, name string, data []byte) step {
	return step{name: name, events: 2, run: func(tx *Tx, tick func()) error {
		if err := tx.AddBackupIn(loc, name); err != nil {
			return err
		}
		tick()
		if err := tx.WriteFileIn(loc, name, data); err != nil {
			return err
		}
		tick()
		return nil
	}}
}

// splitStep is revlog._enforceinlinesize after the inline .i (oldSize
// bytes before the transaction) grew past 128 KiB: the .d is written
// whole, the .i replaced by its index-only form, and the journal told
// with tr.replace where each would be cut to drop the new revisions.
func splitStep(iname, dname, ipath, dpath string, oldSize int64, newIndex, newData []byte) (step, error) {
	if len(newIndex)%64 != 0 {
		return step{}, fmt.Errorf("%s: split index of %d bytes", iname, len(newIndex))
	}
	trindex := -1
	for r := 0; r*64 < len(newIndex); r++ {
		start := int64(binary.BigEndian.Uint64(newIndex[r*64:]) >> 16)
		if r == 0 {
			start = 0 // the header overlays rev 0's offset
		}
		if oldSize <= start+int64(r)*64 {
			trindex = r
			break
		}
	}
	if trindex < 0 {
		return step{}, fmt.Errorf("%s: no revision after offset %d", iname, oldSize)
	}
	dstart := int64(0)
	if trindex > 0 {
		dstart = int64(binary.BigEndian.Uint64(newIndex[trindex*64:]) >> 16)
	}
	return step{name: iname, events: 5, run: func(tx *Tx, tick func()) error {
		j := tx.RevlogJournal(iname)
		if err := j.Add(iname, oldSize); err != nil {
			return err
		}
		if err := j.FlushJournal(); err != nil {
			return err
		}
		tick()
		if err := j.Add(dname, 0); err != nil {
			return err
		}
		if err := tx.FlushJournal(); err != nil {
			return err
		}
		if err := os.WriteFile(dpath, newData, 0o644); err != nil {
			return err
		}
		tick()
		if err := j.Replace(dname, dstart); err != nil {
			return err
		}
		tick()
		if err := WriteFileAtomic(ipath, newIndex); err != nil {
			return err
		}
		tick() // hg's race: the index is replaced, the journal not yet
		if err := j.Replace(iname, int64(trindex)*64); err != nil {
			return err
		}
		tick()
		return nil
	}}, nil
}

// plainPrefix marks .hg files in a snapshot.
const plainPrefix = "plain:"

// snapshot is what a transaction may change: every regular file of the
// store except journal, undo, lock and temporary files (and, for a
// store-less repository, the working-directory files of .hg), plus
// .hg/bookmarks.
func snapshot(root string) (map[string]string, error) {
	hg := filepath.Join(root, ".hg")
	sd := storeDirOf(root)
	out := map[string]string{}
	skipTop := map[string]bool{"lock": true, "wlock": true, "dirstate": true, "branch": true,
		"cache": true, "wcache": true, "hgrc": true, "bookmarks": true, "last-message.txt": true}
	err := filepath.WalkDir(sd, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sd, p)
		rel = filepath.ToSlash(rel)
		base := de.Name()
		if sd == hg && !strings.Contains(rel, "/") && skipTop[rel] {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if de.IsDir() || strings.HasPrefix(base, "journal") || strings.HasPrefix(base, "undo") ||
			base == "lock" || strings.HasSuffix(base, "~") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(data)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if bm, err := os.ReadFile(filepath.Join(hg, "bookmarks")); err == nil {
		out[plainPrefix+"bookmarks"] = string(bm)
	}
	return out, nil
}

// sameState fails t unless the repository at root holds exactly want.
func sameState(t *testing.T, root string, want map[string]string, what string) {
	t.Helper()
	got, err := snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			diffs = append(diffs, "missing "+k)
		case g != v:
			diffs = append(diffs, fmt.Sprintf("%s: %d bytes, want %d", k, len(g), len(v)))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "extra "+k)
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Fatalf("%s: repository differs:\n%s", what, strings.Join(diffs, "\n"))
	}
}

// hgVerify fails t unless hg verify passes.
func hgVerify(t *testing.T, root string) {
	t.Helper()
	out, errOut, err := testenv.HgResult(t, root, "verify")
	if err != nil || bytes.Contains(errOut, []byte("warning")) {
		t.Fatalf("hg verify: %v\n%s%s", err, out, errOut)
	}
}

// pair is a repository A and B = A plus one transaction's worth of
// changes made by hg: a secret commit appending to a file and adding
// one in a new directory (new revlogs, fncache and phaseroots change),
// and a bookmark on it.
type pair struct{ a, b string }

var (
	pairMu    sync.Mutex
	pairCache = map[string]*pairEntry{}
)

type pairEntry struct {
	once sync.Once
	p    pair
	err  error
}

func cached(t *testing.T, key string, make func() (pair, error)) pair {
	t.Helper()
	testenv.HgPath(t)
	pairMu.Lock()
	e := pairCache[key]
	if e == nil {
		e = &pairEntry{}
		pairCache[key] = e
	}
	pairMu.Unlock()
	e.once.Do(func() { e.p, e.err = make() })
	if e.err != nil {
		t.Fatalf("making repositories %s: %v", key, e.err)
	}
	return e.p
}

func hgRun(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("hg", args...)
	cmd.Dir = dir
	cmd.Env = testenv.HgEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("hg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out, nil
}

func copyTree(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
	return nil
}

func commitPair(t *testing.T, spec testenv.Spec) pair {
	a := testenv.Generate(t, spec)
	return cached(t, "commit "+spec.Key(), func() (pair, error) {
		b, err := os.MkdirTemp(tmpRoot, "b-")
		if err != nil {
			return pair{}, err
		}
		b = filepath.Join(b, "repo")
		if err := copyTree(a, b); err != nil {
			return pair{}, err
		}
		if _, err := hgRun(b, "update", "-q", "-r", "tip"); err != nil {
			return pair{}, err
		}
		files, err := hgRun(b, "files", "-r", "tip")
		if err != nil {
			return pair{}, err
		}
		var victim string
		for _, f := range strings.Split(string(files), "\n") {
			if strings.HasPrefix(f, "f/") && plainName.MatchString(f) {
				victim = f
				break
			}
		}
		f, err := os.OpenFile(filepath.Join(b, victim), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return pair{}, err
		}
		f.WriteString("appended by the txn test\n")
		f.Close()
		if err := os.MkdirAll(filepath.Join(b, "txn new"), 0o755); err != nil {
			return pair{}, err
		}
		if err := os.WriteFile(filepath.Join(b, "txn new", "New File.txt"), []byte("new\n"), 0o644); err != nil {
			return pair{}, err
		}
		// A name past 120 bytes: hashed ("dh/...") in a fncache store.
		if err := os.WriteFile(filepath.Join(b, "txn new", "Long"+strings.Repeat("-name", 25)+".txt"), []byte("long\n"), 0o644); err != nil {
			return pair{}, err
		}
		for _, args := range [][]string{
			{"add", "-q", "txn new"},
			{"commit", "-q", "--secret", "-m", "txn test", "-d", "0 0"},
			{"bookmark", "-r", "tip", "txnbm"},
		} {
			if _, err := hgRun(b, args...); err != nil {
				return pair{}, err
			}
		}
		return pair{a, b}, nil
	})
}

// splitPair is A with an inline filelog just under 128 KiB and B, one
// commit later, with it split into .i and .d by hg.
func splitPair(t *testing.T) pair {
	return cached(t, "split", func() (pair, error) {
		dir, err := os.MkdirTemp(tmpRoot, "split-")
		if err != nil {
			return pair{}, err
		}
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		rnd := rand.New(rand.NewSource(1))
		big := make([]byte, 40_000)
		if _, err := hgRun(dir, "init", "a"); err != nil {
			return pair{}, err
		}
		// Three revisions of random (incompressible) data, ~120 KB inline.
		for i := range 3 {
			rnd.Read(big)
			f, err := os.OpenFile(filepath.Join(a, "big.bin"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				return pair{}, err
			}
			f.Write(big)
			f.Close()
			if _, err := hgRun(a, "commit", "-q", "-A", "-m", fmt.Sprint("big ", i), "-d", "0 0"); err != nil {
				return pair{}, err
			}
		}
		if err := copyTree(a, b); err != nil {
			return pair{}, err
		}
		rnd.Read(big)
		f, err := os.OpenFile(filepath.Join(b, "big.bin"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return pair{}, err
		}
		f.Write(big)
		f.Close()
		if _, err := hgRun(b, "commit", "-q", "-m", "split", "-d", "0 0"); err != nil {
			return pair{}, err
		}
		if !exists(filepath.Join(a, ".hg/store/data/big.bin.i")) || exists(filepath.Join(a, ".hg/store/data/big.bin.d")) ||
			!exists(filepath.Join(b, ".hg/store/data/big.bin.d")) {
			return pair{}, errors.New("the split repositories are not inline then split")
		}
		return pair{a, b}, nil
	})
}

// totalEvents is the number of crash points of a plan (Begin and the
// end included).
func totalEvents(t *testing.T, a, b string) int {
	t.Helper()
	steps, err := plan(a, b)
	if err != nil {
		t.Fatal(err)
	}
	n := 2
	for _, s := range steps {
		n += s.events
	}
	return n
}

// apply runs a plan in-process.
func apply(t *testing.T, tx *Tx, a, b string) {
	t.Helper()
	steps, err := plan(a, b)
	if err != nil {
		t.Fatal(err)
	}

	for _, s := range steps {
		if err := s.run(tx, func() {}); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
}

// eventOf is the crash point of the k-th event of the step for name.
func eventOf(t *testing.T, a, b, name string, k int) int {
	t.Helper()
	steps, err := plan(a, b)
	if err != nil {
		t.Fatal(err)
	}
	n := 1 // Begin
	for _, s := range steps {
		if s.name == name {
			return n + k
		}
		n += s.events
	}
	t.Fatalf("no step for %s", name)
	return 0
}
