// Package hggen generates Mercurial repositories with real hg, from a
// Spec: file counts, history, revlog formats, store layouts and names that
// exercise every store encoding rule. Tests use it through testenv; the
// benchmark harness uses it directly (testenv is for tests only).
package hggen

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repository generation.
//
// A Spec describes a repository; GenerateDir turns it into a plan (every
// commit with its parents, files, user, date) and has real Mercurial write
// it in two hg invocations: `hg init` with the format options, then the
// hgfsgen extension (hgfsgen.py) which commits the plan with memctx, sets
// bookmarks, phases and obsolescence markers and updates the working
// directory — all in one process, so even the 20,000-file bench repository
// takes seconds rather than minutes.

//go:embed hgfsgen.py
var genExtension []byte

// Layout is a store layout, from the newest to the oldest.
type Layout string

// Store layouts (keep in sync with mercurial/store.py: fncachestore with and
// without dotencode, encodedstore, basicstore).
const (
	LayoutDefault     Layout = ""            // store + fncache + dotencode
	LayoutNoDotencode Layout = "nodotencode" // store + fncache
	LayoutNoFncache   Layout = "nofncache"   // store only (encodedstore)
	LayoutNoStore     Layout = "nostore"     // revlogs directly under .hg (basicstore)
)

// Spec describes a generated repository. The zero Spec is a tiny repository
// in hg's default format.
type Spec struct {
	Files     int // plain files in the first commit (f/NNN/fileNNNN.txt)
	Revisions int // further linear commits, each editing a few files
	FileSize  int // approximate bytes per plain file (default 64)

	Compression       string // "" (hg's default, zstd here), "zstd", "zlib", "none"
	NoGeneralDelta    bool   // format.usegeneraldelta=false (and no sparse-revlog)
	Layout            Layout
	BookmarksInStore  bool     // format.bookmarks-in-store: .hg/store/bookmarks
	PersistentNodemap bool     // format.use-persistent-nodemap: 00changelog.n and its data file
	Format            []string // further "section.name=value" settings for hg init (hg 7's optional formats)
	Hg                string   // the hg command that writes the repository (default: hg on PATH)

	BigFile   bool // a file whose history exceeds 128 KiB, so its revlog is split (.i + .d)
	LongChain int  // commits each appending to chain.txt: a long delta chain
	Encodings bool // file names exercising every store encoding rule
	History   bool // copies, renames, exec bit, symlink, binary, named branch, merge, tags, bookmarks, phases
	Obsolete  bool // obsolescence markers (implies History)
	Empty     bool // empty files: one from the start, one emptied and refilled, an empty copy, one added empty later
	NoSecret  bool // History without its secret changeset (hg's local clone copies the store only without one)

	NoCheckout bool  // leave the working directory at the null revision
	Seed       int64 // content randomness

	// Evolve adds that many linear changesets after Revisions, shaped as
	// a real project's history: each edits a few lines of one to six
	// files, hot files far more often than the rest, files grow, and a
	// new file appears every 40 changesets; filelogs and the manifest
	// get long delta chains. Not with History or Obsolete (their merges
	// need each commit's full file state, which Evolve does not track).
	Evolve int
}

// Named presets shared by the test suites.
var (
	// Small is a little of everything hg log/cat/manifest show.
	Small = Spec{Files: 6, Revisions: 4, History: true, LongChain: 3}
	// Encodings has file names for every store encoding rule plus a split revlog.
	Encodings = Spec{Files: 2, Revisions: 1, Encodings: true, BigFile: true, History: true}
	// Zlib, NoCompression and NoGeneralDelta vary the revlog format.
	Zlib           = Spec{Files: 4, Revisions: 3, Compression: "zlib", History: true, BigFile: true, LongChain: 20}
	NoCompression  = Spec{Files: 4, Revisions: 3, Compression: "none", LongChain: 10, BigFile: true}
	NoGeneralDelta = Spec{Files: 4, Revisions: 3, NoGeneralDelta: true, Compression: "zlib", LongChain: 30, BigFile: true, History: true}
	// Obsolete has hidden changesets.
	Obsolete = Spec{Files: 3, Revisions: 2, History: true, Obsolete: true}
	// LongChain has a filelog with a long delta chain.
	LongChain = Spec{Files: 2, LongChain: 150}
	// Rich is every kind of history the generator writes in one
	// repository: empty files, a split revlog, copies and renames, named
	// branches (one closed), a merge, tags, bookmarks, draft and secret
	// changesets, obsolescence markers, a delta chain.
	Rich = Spec{Files: 4, Revisions: 3, BigFile: true, LongChain: 12, Obsolete: true, Empty: true}
)

// OldLayouts returns Encodings in each older store layout.
func OldLayouts() []Spec {
	var out []Spec
	for _, l := range []Layout{LayoutNoDotencode, LayoutNoFncache, LayoutNoStore} {
		s := Encodings
		s.Layout = l
		out = append(out, s)
	}
	return out
}

// Evolution is a long history of n changesets (Spec.Evolve) on 100
// files of about 2 KB at the start, for benchmarks on real-history shapes.
func Evolution(n int) Spec {
	return Spec{Files: 100, FileSize: 2000, NoCheckout: true, Seed: 2, Evolve: n}
}

// Large is a repository of n files and a short history, for benchmarks.
func Large(n int) Spec {
	return Spec{Files: n, Revisions: 20, FileSize: 200, LongChain: 50, NoCheckout: true, Seed: 1}
}

// Key is a stable textual form of the spec, for caching.
func (s Spec) Key() string {
	k := fmt.Sprintf("%+v", s)
	// Fields added after Seed are left out while zero, so that the keys
	// of repositories generated before them stay as they were.
	return strings.Replace(k, " Evolve:0}", "}", 1)
}

// GenerateDir creates the repository described by spec at dir (which must
// not exist or be empty), using the hg on PATH. It needs no testing.T, so
// benchmarks and the demo use it too.
func GenerateDir(dir string, spec Spec) error {
	hg := spec.Hg
	if hg == "" {
		var err error
		if hg, err = exec.LookPath("hg"); err != nil {
			//lint:ignore ST1005 a proper noun starts the message
			return fmt.Errorf("Mercurial's hg is not on PATH: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	initArgs := []string{"init"}
	for _, c := range spec.formatConfig() {
		initArgs = append(initArgs, "--config", c)
	}
	if err := runHg(hg, dir, append(initArgs, dir)...); err != nil {
		return err
	}
	plan := buildPlan(spec)
	work, err := os.MkdirTemp("", "hgfsgen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ext := filepath.Join(work, "hgfsgen.py")
	if err := os.WriteFile(ext, genExtension, 0o644); err != nil {
		return err
	}
	pj, err := json.Marshal(plan)
	if err != nil {
		return err
	}
	planPath := filepath.Join(work, "plan.json")
	if err := os.WriteFile(planPath, pj, 0o644); err != nil {
		return err
	}
	args := []string{"--config", "extensions.hgfsgen=" + ext}
	var hgrc string
	if len(plan.Obsolete) > 0 {
		args = append(args, "--config", "experimental.evolution.createmarkers=true")
		// Without this every hg command warns "obsolete feature not
		// enabled but N markers found!".
		hgrc += "[experimental]\nevolution.createmarkers = true\n"
	}
	if spec.PersistentNodemap {
		// hg without its Rust extensions (Debian's 6.3) refuses such a
		// repository unless told to use the slow path.
		args = append(args, "--config", "storage.revlog.persistent-nodemap.slow-path=allow")
		hgrc += "[storage]\nrevlog.persistent-nodemap.slow-path = allow\n"
	}
	if err := runHg(hg, dir, append(args, "hgfsgen", planPath)...); err != nil {
		return err
	}
	if hgrc != "" {
		if err := os.WriteFile(filepath.Join(dir, ".hg", "hgrc"), []byte(hgrc), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func runHg(hg, dir string, args ...string) error {
	cmd := exec.Command(hg, args...)
	cmd.Dir = dir
	cmd.Env = Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("hg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (s Spec) formatConfig() []string {
	var c []string
	if s.Compression != "" {
		c = append(c, "format.revlog-compression="+s.Compression)
	}
	if s.NoGeneralDelta {
		c = append(c, "format.usegeneraldelta=false", "format.sparse-revlog=false")
	}
	switch s.Layout {
	case LayoutNoDotencode:
		c = append(c, "format.dotencode=false")
	case LayoutNoFncache:
		c = append(c, "format.usefncache=false")
	case LayoutNoStore:
		c = append(c, "format.usestore=false")
	}
	if s.BookmarksInStore {
		c = append(c, "format.bookmarks-in-store=true")
	}
	if s.PersistentNodemap {
		c = append(c, "format.use-persistent-nodemap=true", "storage.revlog.persistent-nodemap.slow-path=allow")
	}
	return append(c, s.Format...)
}

// The plan hgfsgen.py executes.
type plan struct {
	Commits   []*planCommit  `json:"commits"`
	Bookmarks map[string]int `json:"bookmarks,omitempty"`
	LocalTags [][2]any       `json:"localtags,omitempty"`
	Public    int            `json:"public"`
	Secret    []int          `json:"secret,omitempty"`
	Obsolete  [][2]int       `json:"obsolete,omitempty"`
	Update    int            `json:"update"`
}

type planCommit struct {
	Parents []int                `json:"parents"`
	User    string               `json:"user"`
	Date    [2]int64             `json:"date"`
	Desc    string               `json:"desc"`
	Branch  string               `json:"branch,omitempty"`
	Close   bool                 `json:"close,omitempty"`
	Files   map[string]*planFile `json:"files"`
	state   map[string]*planFile // manifest after this commit
}

type planFile struct {
	Data  []byte     `json:"data"`
	Edits []planEdit `json:"edits,omitempty"` // instead of Data: edit the previous content
	Flags string     `json:"flags,omitempty"`
	Copy  string     `json:"copy,omitempty"`
}

// planEdit is one line edit (hgfsgen.py's edit): [line, text, insert].
type planEdit [3]any

// editAppend, as a planEdit's line, appends.
const editAppend = 1 << 30

// planner accumulates commits, tracking each one's full file state so
// merges can carry the other parent's files.
type planner struct {
	p    plan
	rng  *rand.Rand
	tags []byte // .hgtags content so far (with {node:N} references)
}

var tzCycle = []int64{0, -3600, 18000, -19800, 25200}

func (pl *planner) commit(parents []int, branch, desc string, changes map[string]*planFile) int {
	n := len(pl.p.Commits)
	state := map[string]*planFile{}
	if len(parents) > 0 && parents[0] >= 0 {
		for k, v := range pl.p.Commits[parents[0]].state {
			state[k] = v
		}
	}
	files := map[string]*planFile{}
	if len(parents) > 1 {
		// A merge takes the other side's files that p1 lacks or that
		// changed there; memctx only records what it is told about.
		for k, v := range pl.p.Commits[parents[1]].state {
			if cur, ok := state[k]; !ok || (cur != v && !strings.HasPrefix(k, ".hgtags")) {
				state[k] = v
				files[k] = v
			}
		}
	}
	for k, v := range changes {
		files[k] = v
		if v == nil {
			delete(state, k)
		} else {
			state[k] = v
		}
	}
	users := []string{"test", "Alice Example <alice@example.com>", "bob"}
	c := &planCommit{
		Parents: parents,
		User:    users[n%len(users)],
		Date:    [2]int64{1700000000 + int64(n)*3671, tzCycle[n%len(tzCycle)]},
		Desc:    desc,
		Branch:  branch,
		Files:   files,
		state:   state,
	}
	pl.p.Commits = append(pl.p.Commits, c)
	return n
}

func (pl *planner) text(n int, salt string) []byte {
	var b strings.Builder
	for b.Len() < n {
		fmt.Fprintf(&b, "%s line %d %x\n", salt, b.Len(), pl.rng.Int63())
	}
	return []byte(b.String())
}

func (pl *planner) random(n int) []byte {
	b := make([]byte, n)
	pl.rng.Read(b)
	return b
}

// EncodingNames are file names covering mercurial/store.py's encodings:
// uppercase (_x), underscore (__), ~ and bytes >126 (~xx), Windows-reserved
// characters, a leading dot or space (dotencode), reserved device names
// (auxencode), trailing dots and spaces, directories ending .i/.d/.hg
// (encodedir), and paths long enough for the hashed dh/ form.
var EncodingNames = []string{
	"README",
	"Dir/Sub/UPPER.TXT",
	"_underscore_",
	"tilde~name",
	"with space.txt",
	".hidden",
	"dir/.dotfile",
	" leading-space",
	"aux", "con.txt", "nul", "prn.c", "com1", "lpt1.txt", "AUX.upper", "dir/aux/nested",
	"trailing.", "trailing ", "dir. /x",
	"x.i/file", "x.d/file", "x.hg/file", "deep/y.i/z.d/w.hg/file",
	"colon:star*quest?quote\"lt<gt>pipe|",
	"unicodé/naïve-ü.txt",
	"tab\there",
	"ctrl\x01char",
	strings.Repeat("long-dir-name/", 8) + "file-beyond-120-chars.txt",
	strings.Repeat("Very-Long-Directory-Name.d/", 10) + strings.Repeat("L", 40) + ".TXT",
}

func buildPlan(s Spec) *plan {
	pl := &planner{rng: rand.New(rand.NewSource(s.Seed)), p: plan{Public: -1, Update: -1}}
	size := s.FileSize
	if size <= 0 {
		size = 64
	}
	plain := make([]string, s.Files)
	first := map[string]*planFile{}
	for i := range plain {
		plain[i] = fmt.Sprintf("f/%03d/file%04d.txt", i/100, i)
		first[plain[i]] = &planFile{Data: pl.text(size, plain[i])}
	}
	first["README"] = &planFile{Data: []byte("generated by hgfs testenv\n")}
	if s.LongChain > 0 {
		first["chain.txt"] = &planFile{Data: pl.text(3000, "chain")}
	}
	if s.Encodings {
		for _, n := range EncodingNames {
			first[n] = &planFile{Data: []byte("name: " + n + "\n")}
		}
	}
	if s.BigFile {
		first["big.bin"] = &planFile{Data: pl.random(60 << 10)}
	}
	if s.Empty {
		first["empty"] = &planFile{Data: []byte{}}
		first["refill.txt"] = &planFile{Data: pl.text(200, "refill")}
	}
	if s.History || s.Obsolete {
		first["bin/run.sh"] = &planFile{Data: []byte("#!/bin/sh\necho hi\n"), Flags: "x"}
		first["link"] = &planFile{Data: []byte("README"), Flags: "l"}
		first["data.bin"] = &planFile{Data: append([]byte("\x00\x01binary\x00"), pl.random(300)...)}
		first["meta.txt"] = &planFile{Data: []byte("\x01\nstarts with the metadata marker\n")}
	}
	tip := pl.commit([]int{-1}, "", "initial import\n\nwith a longer description", first)

	var chain []byte
	if s.LongChain > 0 {
		chain = first["chain.txt"].Data
	}
	for i := 0; i < s.Revisions; i++ {
		ch := map[string]*planFile{}
		for k := 0; k < 3 && len(plain) > 0; k++ {
			p := plain[pl.rng.Intn(len(plain))]
			ch[p] = &planFile{Data: pl.text(size, fmt.Sprintf("%s r%d", p, i))}
		}
		if s.BigFile && i < 2 {
			ch["big.bin"] = &planFile{Data: pl.random(60 << 10)}
		}
		if s.Encodings && i == 0 {
			for _, n := range EncodingNames[:8] {
				ch[n] = &planFile{Data: []byte("changed: " + n + "\n")}
			}
		}
		if len(ch) == 0 {
			ch["README"] = &planFile{Data: []byte(fmt.Sprintf("revision %d\n", i))}
		}
		tip = pl.commit([]int{tip}, "", fmt.Sprintf("edit %d", i), ch)
	}
	if s.BigFile && s.Revisions < 2 {
		tip = pl.commit([]int{tip}, "", "grow big.bin", map[string]*planFile{"big.bin": {Data: pl.random(80 << 10)}})
	}
	if s.Empty {
		// Empty revisions in every position of a filelog: first, after
		// a full text, before one, and an empty copy (whose filelog text
		// is only the copy metadata).
		tip = pl.commit([]int{tip}, "", "empty refill.txt", map[string]*planFile{"refill.txt": {Data: []byte{}}})
		tip = pl.commit([]int{tip}, "", "refill refill.txt", map[string]*planFile{"refill.txt": {Data: pl.text(300, "refilled")}})
		tip = pl.commit([]int{tip}, "", "copy the empty file, add another", map[string]*planFile{
			"empty-copy":   {Data: []byte{}, Copy: "empty"},
			"later/empty2": {Data: []byte{}},
		})
	}
	if s.Evolve > 0 {
		tip = pl.evolve(tip, plain, s.Evolve)
	}
	// Each chain step rewrites one line and every tenth appends one, so
	// every revision is a small delta on the previous one while the file
	// stays small (the plan, and hg's work, stay linear in LongChain).
	lines := strings.SplitAfter(string(chain), "\n")
	for i := 0; i < s.LongChain; i++ {
		step := fmt.Sprintf("chain step %d %x\n", i, pl.rng.Int63())
		if i%10 == 9 || len(lines) == 0 {
			lines = append(lines, step)
		} else {
			lines[(i*7)%len(lines)] = step
		}
		tip = pl.commit([]int{tip}, "", fmt.Sprintf("chain %d", i), map[string]*planFile{"chain.txt": {Data: []byte(strings.Join(lines, ""))}})
	}

	if s.History || s.Obsolete {
		tip = pl.history(tip, s)
	}
	if !s.NoCheckout {
		pl.p.Update = tip
	}
	return &pl.p
}

// evolve adds n linear commits of line edits (Spec.Evolve) after tip
// and returns the last. Files are picked with a skew (u³ over the list,
// new files appended at the end and then promoted to the front half),
// as real histories have a few hot files. Commits carry edits, not
// texts, so the plan stays small; they do not track the file state.
func (pl *planner) evolve(tip int, files []string, n int) int {
	hot := append([]string{"README"}, files...)
	words := []string{"fix", "add", "refactor", "handle", "speed up", "document", "test", "merge", "clean up", "support"}
	users := []string{"test", "Alice Example <alice@example.com>", "bob", "Carol <carol@example.org>"}
	for i := 0; i < n; i++ {
		changes := map[string]*planFile{}
		if i%40 == 39 {
			name := fmt.Sprintf("src/mod%03d/new%05d.py", i/4000, i)
			changes[name] = &planFile{Data: pl.text(500+pl.rng.Intn(2500), name)}
			// A new file is hot for a while: put it in the front half.
			j := pl.rng.Intn(len(hot)/2 + 1)
			hot = append(hot[:j], append([]string{name}, hot[j:]...)...)
		}
		k := 1
		switch r := pl.rng.Intn(100); {
		case r >= 95:
			k = 4 + pl.rng.Intn(3)
		case r >= 85:
			k = 3
		case r >= 60:
			k = 2
		}
		for ; k > 0; k-- {
			u := pl.rng.Float64()
			f := hot[int(u*u*u*float64(len(hot)))]
			if changes[f] != nil {
				continue
			}
			var edits []planEdit
			for e := 1 + pl.rng.Intn(4); e > 0; e-- {
				text := fmt.Sprintf("%s %s in %d %x", words[pl.rng.Intn(len(words))], f, i, pl.rng.Int63())
				switch r := pl.rng.Intn(10); {
				case r < 6:
					edits = append(edits, planEdit{pl.rng.Intn(1 << 20), text, false})
				case r < 9:
					edits = append(edits, planEdit{pl.rng.Intn(1 << 20), text, true})
				default:
					edits = append(edits, planEdit{editAppend, text, false})
				}
			}
			changes[f] = &planFile{Edits: edits}
		}
		c := &planCommit{
			Parents: []int{tip},
			User:    users[i%len(users)],
			Date:    [2]int64{1700000000 + int64(len(pl.p.Commits))*3671, tzCycle[i%len(tzCycle)]},
			Desc:    fmt.Sprintf("%s %d\n\n%s", words[i%len(words)], i, pl.text(pl.rng.Intn(300), "details")),
			Files:   changes,
		}
		pl.p.Commits = append(pl.p.Commits, c)
		tip = len(pl.p.Commits) - 1
	}
	// Commits after these start from an empty state (see Spec.Evolve).
	pl.p.Commits[tip].state = map[string]*planFile{}
	return tip
}

// history adds copies, renames, a named branch with a merge, tags,
// bookmarks, phases and (optionally) obsolete changesets after tip.
func (pl *planner) history(tip int, s Spec) int {
	st := pl.p.Commits[tip].state
	readme := st["README"]
	tip = pl.commit([]int{tip}, "", "copy and rename", map[string]*planFile{
		"copied/README.copy": {Data: readme.Data, Copy: "README"},
		"meta-renamed.txt":   {Data: st["meta.txt"].Data, Copy: "meta.txt"},
		"meta.txt":           nil,
		"bin/run.sh":         {Data: []byte("#!/bin/sh\necho changed mode\n")}, // loses x
		"bin/tool":           {Data: []byte("#!/bin/sh\n"), Flags: "x"},
	})
	base := tip
	pl.tag(base, "v1.0")
	tip = len(pl.p.Commits) - 1
	// Named branch "stable" from base, two commits.
	br := pl.commit([]int{base}, "stable", "start stable", map[string]*planFile{
		"stable.txt": {Data: []byte("stable 1\n")},
	})
	br = pl.commit([]int{br}, "stable", "fix on stable", map[string]*planFile{
		"stable.txt":         {Data: []byte("stable 2\n")},
		"copied/README.copy": {Data: []byte("edited on stable\n")},
	})
	stableHead := br
	// default continues, then merges stable in.
	tip = pl.commit([]int{tip}, "", "work on default", map[string]*planFile{
		"default.txt": {Data: []byte("default\n")},
	})
	tip = pl.commit([]int{tip, stableHead}, "", "merge stable", map[string]*planFile{})
	pl.tag(tip, "v2.0")
	pl.tag(stableHead, "stable-tag")
	tip = len(pl.p.Commits) - 1
	// A second head on stable, and a closed branch.
	br = pl.commit([]int{stableHead}, "stable", "more stable", map[string]*planFile{
		"stable.txt": {Data: []byte("stable 3\n")},
	})
	old := pl.commit([]int{br}, "old-branch", "old branch", map[string]*planFile{"old.txt": {Data: []byte("old\n")}})
	old = pl.commit([]int{old}, "old-branch", "close old branch", map[string]*planFile{})
	pl.p.Commits[old].Close = true
	pl.p.Bookmarks = map[string]int{"feature": br, "main-bm": tip}
	pl.p.LocalTags = [][2]any{{base, "local-tag"}}
	pl.p.Public = base
	tip = pl.commit([]int{tip}, "", "last on default", map[string]*planFile{
		"default.txt": {Data: []byte("default 2\n")},
	})
	if !s.NoSecret {
		sec := pl.commit([]int{tip}, "", "secret work", map[string]*planFile{"secret.txt": {Data: []byte("s\n")}})
		pl.p.Secret = []int{sec}
	}
	if s.Obsolete {
		// An amended changeset (obsolete with a successor) and a pruned one.
		a := pl.commit([]int{tip}, "", "to be amended", map[string]*planFile{"amend.txt": {Data: []byte("v1\n")}})
		b := pl.commit([]int{tip}, "", "amended", map[string]*planFile{"amend.txt": {Data: []byte("v2\n")}})
		p := pl.commit([]int{b}, "", "pruned", map[string]*planFile{"pruned.txt": {Data: []byte("x\n")}})
		pl.p.Obsolete = [][2]int{{a, b}, {p, -1}}
		tip = b
	}
	return tip
}

// tag commits a .hgtags line naming commit rev on top of the current tip
// of rev's branch line (the last commit).
func (pl *planner) tag(rev int, name string) {
	last := len(pl.p.Commits) - 1
	pl.tags = append(pl.tags, fmt.Sprintf("{node:%d} %s\n", rev, name)...)
	data := append([]byte{}, pl.tags...)
	pl.commit([]int{last}, pl.p.Commits[last].Branch, "Added tag "+name, map[string]*planFile{".hgtags": {Data: data}})
}

// Env is the environment hg runs in for generation, tests and benchmarks:
// no user or system hgrc (HGRCPATH empty), plain output, a fixed user and
// UTF-8, so outputs are comparable byte for byte.
func Env() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HG") || k == "LANG" || k == "LC_ALL" || k == "TZ" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HGRCPATH=", "HGPLAIN=1", "HGUSER=test", "HGENCODING=utf-8", "HGENCODINGMODE=strict", "LANG=C", "LC_ALL=C", "TZ=UTC")
}
