package fsnode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test: a child process (this test binary, re-executed) works
// on a cache in a loop and is killed with SIGKILL at a random moment; the
// parent then checks that the cache opens, Fsck is clean, every file is
// at a committed state (append logs are whole records, atomically
// replaced files are whole versions) and everything the child fsynced is
// there. The same cache goes through every round.
//
// FSNODE_CRASH_ROUNDS sets the number of rounds (make stress).

const (
	crashEnvDir = "FSNODE_CRASH_CHILD_DIR"
	// crashEnvVirtual: the child makes files virtual now and then
	// (TestCrashVirtual).
	crashEnvVirtual = "FSNODE_CRASH_VIRTUAL"
	// crashFrozen is the file TestCrashVirtual's child makes virtual
	// and syncs before it says READY, and never changes.
	crashFrozen = "frozen"
	crashLogs   = 4 // append logs a0..a3
	crashAtomic = 6 // atomically replaced files t0..t5
)

func crashRounds(t *testing.T) int {
	if s := os.Getenv("FSNODE_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("FSNODE_CRASH_ROUNDS: %v", err)
		}
		return n
	}
	if testing.Short() {
		return 3
	}
	return 10
}

// record k of append log name: "name k <filler>\n"; fillers cross the
// inline threshold now and then.
func crashRecord(name string, k int) []byte {
	n := (k * 7919) % 300
	if k%5 == 4 {
		n = 5000 + (k*104729)%20000
	}
	b := []byte(fmt.Sprintf("%s %d ", name, k))
	for i := range n {
		b = append(b, 'a'+byte((k+i)%26))
	}
	return append(b, '\n')
}

// version v of atomically replaced file name.
func crashVersion(name string, v int) []byte {
	n := (v * 4099) % 12000
	b := []byte(fmt.Sprintf("%s v%d\n", name, v))
	for i := range n {
		b = append(b, byte('A'+(v*31+i)%26))
	}
	return b
}

// crashXattrs are the extended attributes of version v of atomically
// replaced file name.
func crashXattrs(name string, v int) map[string][]byte {
	data := crashVersion(name, v)
	return map[string][]byte{
		"user.version":     []byte(strconv.Itoa(v)),
		"trusted.contents": data[:min(len(data), 1+v*37%2000)],
	}
}

// parseLog returns the number of whole records in an append log and
// whether a final partial record (a prefix of the next one) is all that
// follows.
func parseLog(name string, data []byte) (int, error) {
	k := 0
	for len(data) > 0 {
		want := crashRecord(name, k)
		if len(data) < len(want) {
			if !bytes.Equal(data, want[:len(data)]) {
				return k, fmt.Errorf("%s: torn tail at record %d: %.40q", name, k, data)
			}
			return k, nil
		}
		if !bytes.Equal(data[:len(want)], want) {
			return k, fmt.Errorf("%s: record %d is wrong: %.60q", name, k, data)
		}
		data = data[len(want):]
		k++
	}
	return k, nil
}

// parseVersion returns the version an atomically replaced file holds.
func parseVersion(name string, data []byte) (int, error) {
	var v int
	if _, err := fmt.Sscanf(string(data), name+" v%d\n", &v); err != nil {
		return 0, fmt.Errorf("%s: no version header in %.40q", name, data)
	}
	if !bytes.Equal(data, crashVersion(name, v)) {
		return 0, fmt.Errorf("%s: version %d is torn (%d bytes)", name, v, len(data))
	}
	return v, nil
}

func TestCrash(t *testing.T) { runCrash(t, false) }

// TestCrashVirtual is TestCrash with the child making the logs and the
// atomically replaced files virtual now and then (their revisions are
// computed from the reference: crashResolve), so that kills land
// across copies on write too; and one file, made virtual and synced
// before the first kill, must stay virtual with its contents.
func TestCrashVirtual(t *testing.T) { runCrash(t, true) }

func runCrash(t *testing.T, virtual bool) {
	if os.Getenv(crashEnvDir) != "" {
		t.Skip("in the crash child")
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	f, err := Create(cache, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "synced.log")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for round := range crashRounds(t) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), crashEnvDir+"="+dir)
		if virtual {
			cmd.Env = append(cmd.Env, crashEnvVirtual+"=1")
		}
		var out bytes.Buffer
		cmd.Stderr = &out
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill at a random moment after the child has started working.
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(pipe)
			signalled := false
			for sc.Scan() {
				if sc.Text() == "READY" && !signalled {
					close(ready)
					signalled = true
				}
			}
			if !signalled {
				close(ready)
			}
		}()
		<-ready
		time.Sleep(time.Duration(5+rng.IntN(250)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: child ended by itself (%v):\n%s", round, err, out.String())
		}
		verifyCrash(t, round, cache, logPath, virtual)
		if t.Failed() {
			t.Logf("child output:\n%s", out.String())
			return
		}
	}
}

func verifyCrash(t *testing.T, round int, cache, logPath string, virtual bool) {
	t.Helper()
	r, err := Fsck(cache, false)
	if err != nil {
		t.Fatalf("round %d: fsck after crash: %v", round, err)
	}
	if !r.OK() {
		t.Fatalf("round %d: fsck after crash:\n%s", round, r)
	}
	f, err := Open(cache, Options{})
	if err != nil {
		t.Fatalf("round %d: open after crash: %v", round, err)
	}
	f.SetResolver(crashResolve)
	if virtual {
		a, err := f.LookupPath(bg, crashFrozen)
		if err != nil {
			t.Fatalf("round %d: %s: %v", round, crashFrozen, err)
		}
		if _, ok, err := f.Virtual(bg, a.Ino); err != nil || !ok {
			t.Errorf("round %d: %s is not virtual (%v)", round, crashFrozen, err)
		}
		if got := must[[]byte](t)(f.ReadFile(bg, crashFrozen)); !bytes.Equal(got, crashVersion(crashFrozen, 7)) {
			t.Errorf("round %d: %s reads %d bytes, not its revision", round, crashFrozen, len(got))
		}
		t.Logf("round %d: %d virtual files", round, f.VirtualStats().Virtual)
	}
	have := map[string]int{}
	for i := range crashLogs {
		name := fmt.Sprintf("a%d", i)
		data, err := f.ReadFile(bg, name)
		if errors.Is(err, syscall.ENOENT) {
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		n, err := parseLog(name, data)
		if err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		have[name] = n
	}
	for i := range crashAtomic {
		name := fmt.Sprintf("t%d", i)
		data, err := f.ReadFile(bg, name)
		if errors.Is(err, syscall.ENOENT) {
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		v, err := parseVersion(name, data)
		if err != nil {
			t.Errorf("round %d: %v", round, err)
		}
		have[name] = v + 1
		a := must[Attr](t)(f.LookupPath(bg, name))
		for xname, want := range crashXattrs(name, v) {
			got, err := f.Getxattr(bg, a.Ino, xname)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("round %d: %s version %d: xattr %s = %.20q, %v; want %.20q", round, name, v, xname, got, err, want)
			}
		}
	}
	st := f.Stats()
	ingested := verifyIngests(t, round, f)
	summary := fmt.Sprint(have, " ", len(ingested), " ingested groups")
	for k, v := range ingested {
		have[k] = v
	}
	if err := f.Close(); err != nil {
		t.Fatalf("round %d: close: %v", round, err)
	}
	t.Logf("round %d: state %s; %d data files", round, summary, st.DataFiles)
	checkFsck(t, cache)
	// Everything the child fsynced: "name n" = n records / version n-1.
	lf, err := os.Open(logPath)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	synced := map[string]int{}
	sc := bufio.NewScanner(lf)
	for sc.Scan() {
		name, n, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue // the child was killed while writing this line
		}
		if v, err := strconv.Atoi(n); err == nil {
			synced[name] = max(synced[name], v)
		}
	}
	for name, n := range synced {
		if have[name] < n {
			t.Errorf("round %d: %s: fsynced %d, cache has %d", round, name, n, have[name])
		}
	}
}

// TestCrashChild is the child's loop; it runs only under TestCrash.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnvDir)
	if dir == "" {
		t.Skip("only run by TestCrash")
	}
	f, err := Open(filepath.Join(dir, "cache"), Options{DataFileMax: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	f.SetResolver(crashResolve)
	virtual := os.Getenv(crashEnvVirtual) != ""
	logf, err := os.OpenFile(filepath.Join(dir, "synced.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for i := range crashLogs {
		name := fmt.Sprintf("a%d", i)
		if data, err := f.ReadFile(bg, name); err == nil {
			n, _ := parseLog(name, data)
			// Cut a partial record so appends stay parseable.
			sz := uint64(0)
			for k := range n {
				sz += uint64(len(crashRecord(name, k)))
			}
			a := must[Attr](t)(f.LookupPath(bg, name))
			must[Attr](t)(f.SetAttr(bg, a.Ino, SetAttr{Size: &sz}))
			next[name] = n
		}
	}
	for i := range crashAtomic {
		name := fmt.Sprintf("t%d", i)
		if data, err := f.ReadFile(bg, name); err == nil {
			v, _ := parseVersion(name, data)
			next[name] = v + 1
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	if virtual {
		if _, err := f.LookupPath(bg, crashFrozen); errors.Is(err, syscall.ENOENT) {
			a := createFile(t, f, RootIno, crashFrozen, nil)
			data := crashVersion(crashFrozen, 7)
			must[Attr](t)(f.SetVirtual(bg, a.Ino, crashRef(crashFrozen, 7), uint64(len(data)), time.Time{}))
			if err := f.Sync(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
	fmt.Println("READY")
	var orphan Handle
	for step := 0; ; step++ {
		if virtual && rng.IntN(5) == 0 {
			crashMakeVirtual(t, f, rng, next, logf)
		}
		switch op := rng.IntN(12); {
		case op >= 10: // a small ingest through the sink (bulk mode)
			crashIngest(t, f, step, rng.IntN(2) == 0, logf)
		case op < 4: // append a record to a log
			name := fmt.Sprintf("a%d", rng.IntN(crashLogs))
			a, h, err := f.Create(bg, RootIno, name, 0o644, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_APPEND)
			if err != nil {
				t.Fatal(err)
			}
			rec := crashRecord(name, next[name])
			for len(rec) > 0 { // in pieces, as hg writes
				n := min(len(rec), 1+rng.IntN(3000))
				if _, err := f.Write(bg, h, 0, rec[:n]); err != nil {
					t.Fatal(err)
				}
				rec = rec[n:]
			}
			next[name]++
			if rng.IntN(4) == 0 {
				if err := f.Fsync(bg, h, false); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(logf, "%s %d\n", name, next[name])
			}
			f.Release(h)
			f.Forget(a.Ino, 1)
		case op < 7: // atomically replace a file
			name := fmt.Sprintf("t%d", rng.IntN(crashAtomic))
			tmp := name + ".tmp"
			a, h, err := f.Create(bg, RootIno, tmp, 0o644, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC)
			if err != nil {
				t.Fatal(err)
			}
			data := crashVersion(name, next[name])
			for off := 0; off < len(data); {
				n := min(len(data)-off, 1+rng.IntN(5000))
				if _, err := f.Write(bg, h, int64(off), data[off:off+n]); err != nil {
					t.Fatal(err)
				}
				off += n
			}
			// Extended attributes naming the version: they commit with
			// the inode, so the renamed version must carry them.
			for xname, v := range crashXattrs(name, next[name]) {
				if err := f.Setxattr(bg, a.Ino, xname, v, 0); err != nil {
					t.Fatal(err)
				}
			}
			f.Release(h)
			f.Forget(a.Ino, 1)
			if err := f.Rename(bg, RootIno, tmp, RootIno, name, 0); err != nil {
				t.Fatal(err)
			}
			next[name]++
			if rng.IntN(4) == 0 {
				if err := f.Sync(bg); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(logf, "%s %d\n", name, next[name])
			}
		case op < 9: // namespace churn
			d := fmt.Sprintf("d%d", rng.IntN(3))
			if a, err := f.Mkdir(bg, RootIno, d, 0o755); err == nil {
				f.Forget(a.Ino, 1)
				createFile(t, f, a.Ino, "x", crashVersion("x", step))
			} else {
				a := must[Attr](t)(f.LookupPath(bg, d))
				f.Unlink(bg, a.Ino, "x")
				if err := f.Rmdir(bg, RootIno, d); err != nil && !errors.Is(err, syscall.ENOTEMPTY) {
					t.Fatal(err)
				}
			}
		case op == 9: // an orphan: open, unlink, keep writing, release later
			if orphan != 0 {
				f.Release(orphan)
				orphan = 0
				continue
			}
			a, h, err := f.Create(bg, RootIno, "orphan", 0o644, syscall.O_RDWR|syscall.O_CREAT|syscall.O_TRUNC)
			if err != nil {
				t.Fatal(err)
			}
			f.Forget(a.Ino, 1)
			if err := f.Unlink(bg, RootIno, "orphan"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(bg, h, 0, crashVersion("orphan", step)); err != nil {
				t.Fatal(err)
			}
			orphan = h
		}
		if step%50 == 49 && rng.IntN(3) == 0 {
			compact := f.Compact
			if rng.IntN(2) == 0 {
				compact = f.CompactAll // the current data file too
			}
			if _, err := compact(bg); err != nil {
				t.Fatal(err)
			}
		}
	}
}

const crashSinkFiles = 8

// crashIngest ingests group s/g<step> through a sink; finished groups are
// logged as synced.
func crashIngest(t *testing.T, f *FS, step int, finish bool, logf *os.File) {
	s := f.NewSink(bg)
	for j := range crashSinkFiles {
		name := fmt.Sprintf("g%df%d", step, j)
		data := crashVersion(name, j*3+step)
		w, err := s.Create(fmt.Sprintf("s/g%d/f%d", step, j), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for d := data; len(d) > 0; {
			n := min(len(d), 1000)
			if _, err := w.Write(d[:n]); err != nil {
				t.Fatal(err)
			}
			d = d[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !finish {
		// Left unfinished: ingest mode stays on for the rest of the run.
		return
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logf, "sg%d %d\n", step, crashSinkFiles)
}

// verifyIngests checks every ingested file is whole and returns, per
// group "sg<step>", how many files it has.
func verifyIngests(t *testing.T, round int, f *FS) map[string]int {
	out := map[string]int{}
	sd, err := f.LookupPath(bg, "s")
	if err != nil {
		return out
	}
	groups, err := f.ReadDir(bg, sd.Ino, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		var step int
		if _, err := fmt.Sscanf(g.Name, "g%d", &step); err != nil {
			t.Errorf("round %d: stray %s", round, g.Name)
			continue
		}
		files, err := f.ReadDir(bg, g.Ino, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range files {
			var j int
			if _, err := fmt.Sscanf(e.Name, "f%d", &j); err != nil {
				t.Errorf("round %d: stray %s/%s", round, g.Name, e.Name)
				continue
			}
			data, err := f.ReadFile(bg, "s/"+g.Name+"/"+e.Name)
			if err != nil {
				t.Fatal(err)
			}
			want := crashVersion(fmt.Sprintf("g%df%d", step, j), j*3+step)
			if !bytes.Equal(data, want) {
				t.Errorf("round %d: ingested s/%s/%s is torn: %d of %d bytes", round, g.Name, e.Name, len(data), len(want))
			}
		}
		out["s"+g.Name] = len(files)
	}
	return out
}

// crashRef names revision n of file name of the crash test: n records
// of append log name, or version n of atomically replaced file name.
func crashRef(name string, n int) VirtualRef {
	var r VirtualRef
	binary.BigEndian.PutUint64(r.Node[:], uint64(n))
	r.Path = name
	return r
}

// crashResolve is the crash test's resolver: it computes the revision
// a reference (crashRef) names.
func crashResolve(r VirtualRef) ([]byte, error) {
	n := int(binary.BigEndian.Uint64(r.Node[:]))
	switch {
	case n < 0 || n > 1<<20:
		return nil, fmt.Errorf("crash revision %d of %s", n, r.Path)
	case strings.HasPrefix(r.Path, "a"):
		var b []byte
		for k := range n {
			b = append(b, crashRecord(r.Path, k)...)
		}
		return b, nil
	default:
		return crashVersion(r.Path, n), nil
	}
}

// crashMakeVirtual makes an append log or an atomically replaced file
// virtual at what it holds (next says), sometimes syncing and logging
// it as synced.
func crashMakeVirtual(t *testing.T, f *FS, rng *rand.Rand, next map[string]int, logf *os.File) {
	name, n := fmt.Sprintf("a%d", rng.IntN(crashLogs)), 0
	if rng.IntN(2) == 0 {
		name = fmt.Sprintf("t%d", rng.IntN(crashAtomic))
	}
	a, err := f.LookupPath(bg, name)
	if errors.Is(err, syscall.ENOENT) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	n = next[name]
	if name[0] == 't' {
		n-- // the version it holds
	}
	data, err := crashResolve(crashRef(name, n))
	if err != nil {
		t.Fatal(err)
	}
	must[Attr](t)(f.SetVirtual(bg, a.Ino, crashRef(name, n), uint64(len(data)), time.Time{}))
	if rng.IntN(4) == 0 {
		if err := f.Sync(bg); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(logf, "%s %d\n", name, next[name])
	}
}
