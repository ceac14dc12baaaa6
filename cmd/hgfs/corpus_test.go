package main

// The differential corpus suite: every path of hgfs that writes history
// (unbundle, clone over HTTP and ssh, pull, local clone) and hgfs serve
// run on real history (Mercurial's first 2,971 changesets) and on
// generated repositories of every kind and format, and each result is
// compared with what hg 6.3 and hg 7 do with the same input: exit status
// and output, hg verify by both, every changeset with its phase,
// bookmarks and tags, the obsolescence markers, the requirements, and
// store bytes where hg's are deterministic (revlogs a stream or local
// clone copies as they are; the changelog of an uncompressed store).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/bundle2"
	"github.com/hgfs/hgfs/testenv"
)

// formatBase is the history of the generated format variants: small,
// with empty files, a split revlog, copies, branches, bookmarks and
// phases, so each format meets all of them. No secret changeset: hg
// clones such a local repository by copying its store, the path this
// variant is for (rich has one).
var formatBase = testenv.Spec{Files: 3, Revisions: 2, BigFile: true, Empty: true, History: true, NoSecret: true, LongChain: 5}

// source is a repository the suite reads from.
type source struct {
	name  string
	dir   string
	maker *oracle // the Mercurial that wrote it (and serves it)
}

// corpusSources returns the real history, the rich generated history,
// hg 6.3's formats (compressions, no generaldelta, the old store layouts,
// bookmarks in the store, a persistent nodemap) and hg 7's (its default,
// a persistent nodemap with the internal phase, and
// delta-info flags, which hg 6.3 does not read).
func corpusSources(t *testing.T, ors []*oracle) []source {
	t.Helper()
	srcs := []source{
		{"history", testenv.CorpusRepo(t, testenv.CorpusHistory), ors[0]},
		{"rich", testenv.Generate(t, testenv.Rich), ors[0]},
	}
	variant := func(f func(*testenv.Spec)) testenv.Spec {
		s := formatBase
		f(&s)
		return s
	}
	for _, v := range []struct {
		name string
		spec testenv.Spec
	}{
		{"zlib", variant(func(s *testenv.Spec) { s.Compression = "zlib" })},
		{"uncompressed", variant(func(s *testenv.Spec) { s.Compression = "none" })},
		{"no-generaldelta", variant(func(s *testenv.Spec) { s.NoGeneralDelta = true })},
		{"no-dotencode", variant(func(s *testenv.Spec) { s.Layout = testenv.LayoutNoDotencode })},
		{"no-fncache", variant(func(s *testenv.Spec) { s.Layout = testenv.LayoutNoFncache })},
		{"no-store", variant(func(s *testenv.Spec) { s.Layout = testenv.LayoutNoStore })},
		{"bookmarks-in-store", variant(func(s *testenv.Spec) { s.BookmarksInStore = true })},
		{"persistent-nodemap", variant(func(s *testenv.Spec) { s.PersistentNodemap = true })},
	} {
		srcs = append(srcs, source{v.name, testenv.Generate(t, v.spec), ors[0]})
	}
	if len(ors) > 1 {
		h7 := ors[1]
		for _, v := range []struct {
			name string
			spec testenv.Spec
		}{
			{"default", func() testenv.Spec { s := testenv.Rich; s.Hg = h7.Path; return s }()},
			{"nodemap-internal-phase", variant(func(s *testenv.Spec) {
				s.Hg, s.PersistentNodemap = h7.Path, true
				s.Format = []string{"format.use-internal-phase=true"}
			})},
			{"delta-info", variant(func(s *testenv.Spec) {
				s.Hg, s.Format = h7.Path, []string{"format.use-delta-info-flags=true"}
			})},
		} {
			srcs = append(srcs, source{h7.Name + "-" + v.name, testenv.Generate(t, v.spec), h7})
		}
	}
	return srcs
}

func findSource(t *testing.T, srcs []source, name string) source {
	t.Helper()
	for _, s := range srcs {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no source %s", name)
	return source{}
}

// transferTime is the part of hg's stream clone summary that depends on
// the clock.
var transferTime = regexp.MustCompile(` in [0-9.]+ seconds \([^)]*\)`)

func normalize(o outcome) outcome {
	o.out = transferTime.ReplaceAllString(o.out, " in (time)")
	o.err = transferTime.ReplaceAllString(o.err, " in (time)")
	return o
}

// hgfsWords are the messages where hgfs names itself and its own way
// on purpose; each rewrites an oracle's words into hgfs's before the
// comparison, so that everything else in the output still counts.
var hgfsWords = []struct {
	hg   *regexp.Regexp
	hgfs string
}{
	// hgfs clone applies a packed1 bundle; hg's hint names its debug
	// command.
	{regexp.MustCompile(`(?m)^abort: packed bundles cannot be applied with "hg unbundle"\n\(use "hg debugapplystreamclonebundle"\)\n`),
		"abort: packed bundles cannot be applied with \"hgfs unbundle\"\n(use \"hgfs clone ${bundle} DEST\")\n"},
}

// inHgfsWords is an oracle's outcome in hgfs's words (hgfsWords); bundle
// is the file the command read.
func inHgfsWords(o outcome, bundle string) outcome {
	for _, w := range hgfsWords {
		repl := strings.ReplaceAll(w.hgfs, "${bundle}", strings.ReplaceAll(bundle, "$", "$$"))
		o.out = w.hg.ReplaceAllString(o.out, repl)
		o.err = w.hg.ReplaceAllString(o.err, repl)
	}
	return o
}

// label makes a bundle type or a case name usable as a file name.
var label = strings.NewReplacer(";", "_", "=", "_", "/", "_").Replace

// writeBundle has o write a bundle of everything in src (hidden
// changesets too) of type typ ("packed1": a stream clone bundle).
func writeBundle(t *testing.T, o *oracle, src, typ, path string) {
	t.Helper()
	if typ == "packed1" {
		o.run(t, src, "debugcreatestreamclonebundle", path)
		return
	}
	// A stream holds secret changesets too; hg wants that allowed.
	o.run(t, src, "--config", "experimental.changegroup3=true", "--config", "server.uncompressedallowsecret=true",
		"bundle", "-q", "-a", "--hidden", "-t", typ, path)
}

// TestCorpusUnbundle applies every bundle type hg 6.3 writes (and those
// hg 7 writes) to an empty repository with hgfs unbundle and with
// hg unbundle of both versions.
func TestCorpusUnbundle(t *testing.T) {
	t.Parallel()
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	dir := t.TempDir()
	rich, hist := findSource(t, srcs, "rich").dir, findSource(t, srcs, "history").dir

	type bundleCase struct {
		name   string
		bundle string
		init   []string  // format of the empty repositories
		pre    string    // a bundle hg 7 applies to every target first
		ref    string    // name of an earlier case with the same content: reuse its oracles' results
		only   []*oracle // compare with these oracles only (default all)
		cl     bool      // the changelogs must be byte for byte hg 6.3's
	}
	var cases []bundleCase
	richTypes := map[int][]string{
		0: {"none-v1", "gzip-v1", "bzip2-v1", "none-v2", "gzip-v2", "bzip2-v2", "zstd-v2",
			"none-v2;cg.version=02", "none-v2;cg.version=03",
			"zstd-v2;obsolescence=yes;phases=yes", "none-v2;cg.version=03;obsolescence=yes;phases=yes",
			"packed1", "none-v2;stream=v2"},
		1: {"none-v1", "bzip2-v2", "zstd-v2;obsolescence=yes;phases=yes", "none-v2;cg.version=03", "none-v2;stream=v2"},
	}
	// hg makes no stream bundle of a repository with obsolescence
	// markers (its reader could not take them).
	richNoObs := testenv.Rich
	richNoObs.Obsolete, richNoObs.History = false, true
	for i, o := range ors {
		for _, typ := range richTypes[i] {
			name := "rich-" + o.Name + "-" + label(typ)
			b := filepath.Join(dir, name+".hg")
			src := rich
			if typ == "packed1" || strings.Contains(typ, "stream=") {
				src = testenv.Generate(t, richNoObs)
			}
			writeBundle(t, o, src, typ, b)
			cases = append(cases, bundleCase{name: name, bundle: b})
		}
	}
	// Targets of other formats, with the richest bundle.
	richAll := filepath.Join(dir, "rich-"+ors[0].Name+"-"+label("zstd-v2;obsolescence=yes;phases=yes")+".hg")
	cases = append(cases,
		bundleCase{name: "rich-to-bookmarks-in-store", bundle: richAll, init: []string{"--config", "format.bookmarks-in-store=true"}},
		bundleCase{name: "rich-to-persistent-nodemap", bundle: richAll, init: []string{"--config", "format.use-persistent-nodemap=true"}},
	)
	if len(ors) > 1 {
		// A persistent nodemap that hg 7 wrote (hg 6.3 without Rust
		// writes none), which the unbundle must keep up to date.
		part := filepath.Join(dir, "rich-part.hg")
		ors[1].run(t, rich, "bundle", "-q", "--hidden", "--base", "null", "-r", "19", "-t", "none-v2", part)
		cases = append(cases, bundleCase{name: "rich-onto-hg7-nodemap", bundle: richAll, pre: part,
			init: []string{"--config", "format.use-persistent-nodemap=true"}})
	}
	// One bundle with two changegroup parts, the second on top of the
	// first (filelogs appear in both), as hg unbundle applies them in
	// one transaction.
	richFirst, richRest := filepath.Join(dir, "rich-first.hg"), filepath.Join(dir, "rich-rest.hg")
	ors[0].run(t, rich, "bundle", "-q", "--hidden", "--base", "null", "-r", "24", "-t", "none-v2", richFirst)
	ors[0].run(t, rich, "bundle", "-q", "--hidden", "--base", "24", "-a", "-t", "none-v2", richRest)
	cases = append(cases, bundleCase{name: "rich-two-changegroup-parts", bundle: joinBundles(t, filepath.Join(dir, "rich-two.hg"), richFirst, richRest)})
	histFirst, histRest := filepath.Join(dir, "history-first.hg"), filepath.Join(dir, "history-rest.hg")
	ors[0].run(t, hist, "bundle", "-q", "--base", "null", "-r", "1500", "-t", "none-v2", histFirst)
	ors[0].run(t, hist, "bundle", "-q", "--base", "1500", "-a", "-t", "none-v2", histRest)
	cases = append(cases, bundleCase{name: "history-two-changegroup-parts", only: ors[:1],
		bundle: joinBundles(t, filepath.Join(dir, "history-two.hg"), histFirst, histRest)})
	// Revision flags hg 6.3 has no processor for (0x2000 EXTSTORED,
	// 0x4000 ELLIPSIS) on a filelog revision whose text no longer
	// matches its hash: hg refuses the bundle.
	cg3 := filepath.Join(dir, "rich-"+ors[0].Name+"-"+label("none-v2;cg.version=03")+".hg")
	for _, flag := range []uint16{0x2000, 0x4000} {
		name := fmt.Sprintf("rich-cg3-flag-%#x-bad-hash", flag)
		cases = append(cases, bundleCase{name: name, bundle: flagRevision(t, cg3, filepath.Join(dir, name+".hg"), "README", flag)})
	}
	// Real history: the corpus bundle itself (hg 6.3, zstd-v2), hg 7's
	// HG10UN of it, and the corpus into an uncompressed store, where
	// hg's changelog bytes are the reference.
	corpus := testenv.Corpus(t, testenv.CorpusHistory)
	cases = append(cases, bundleCase{name: "history-" + ors[0].Name + "-zstd-v2", bundle: corpus})
	if len(ors) > 1 {
		b := filepath.Join(dir, "history-"+ors[1].Name+"-none-v1.hg")
		writeBundle(t, ors[1], hist, "none-v1", b)
		cases = append(cases, bundleCase{name: "history-" + ors[1].Name + "-none-v1", bundle: b, ref: cases[len(cases)-1].name})
	}
	cases = append(cases, bundleCase{name: "history-to-uncompressed", bundle: corpus,
		init: []string{"--config", "format.revlog-compression=none"}, only: ors[:1], cl: true})

	results := map[string][]outcome{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cdir := filepath.Join(dir, label(tc.name))
			os.Mkdir(cdir, 0o755)
			use := ors
			if tc.only != nil {
				use = tc.only
			}
			target := func(d string) {
				if tc.pre == "" {
					ors[0].run(t, cdir, append([]string{"init", d}, tc.init...)...)
					return
				}
				ors[1].run(t, cdir, append([]string{"init", d}, tc.init...)...)
				ors[1].run(t, d, "unbundle", "-q", tc.pre)
			}
			wants := results[tc.ref]
			if wants == nil {
				for _, o := range use {
					d := filepath.Join(cdir, o.Name)
					if tc.pre != "" {
						target(d)
					} else {
						o.run(t, cdir, append([]string{"init", d}, tc.init...)...)
					}
					out, errOut, code := o.result(t, d, "--config", "experimental.changegroup3=true", "unbundle", tc.bundle)
					wants = append(wants, inHgfsWords(normalize(outcome{d, out, errOut, code}), tc.bundle))
				}
				results[tc.name] = wants
			}
			got := filepath.Join(cdir, "hgfs")
			target(got)
			out, errOut, code := hgfsRun(got, "unbundle", tc.bundle)
			compareOutcomes(t, use, wants, normalize(outcome{got, out, errOut, code}))
			if tc.cl && code == 0 {
				sameStoreFiles(t, use[0].Name, wants[0].repo, "hgfs", got, func(rel string) bool {
					return strings.HasPrefix(rel, "00changelog.")
				})
			}
		})
	}
}

// joinBundles writes to out an uncompressed bundle2 holding the parts of
// each of the bundle2 files in order, and returns out.
func joinBundles(t *testing.T, out string, bundles ...string) string {
	t.Helper()
	return rewriteBundles(t, out, nil, bundles...)
}

// rewriteBundles writes to out an uncompressed bundle2 holding the parts
// of each of the bundle2 files in order, each payload through edit (nil:
// as it is), and returns out.
func rewriteBundles(t *testing.T, out string, edit func(p *bundle2.Part, data []byte) []byte, bundles ...string) string {
	t.Helper()
	var buf bytes.Buffer
	bw, err := bundle2.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bundles {
		f, err := os.Open(b)
		if err != nil {
			t.Fatal(err)
		}
		br, err := bundle2.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for {
			p, err := br.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			data, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if edit != nil {
				data = edit(p, data)
			}
			if err := bw.WritePart(p.Type, p.Mandatory, p.MandatoryParams, p.AdvisoryParams, data); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// flagRevision copies the cg3 bundle in to out with the first revision of
// filelog file given flag and the last byte of its delta changed, and
// returns out.
func flagRevision(t *testing.T, in, out, file string, flag uint16) string {
	t.Helper()
	changed := false
	rewriteBundles(t, out, func(p *bundle2.Part, data []byte) []byte {
		if v, _ := p.Param("version"); p.Type == "changegroup" && v == "03" {
			changed = flagInChangegroup(data, file, flag)
		}
		return data
	}, in)
	if !changed {
		t.Fatalf("%s: no cg3 revision of %s", in, file)
	}
	return out
}

// flagInChangegroup edits cg3 data in place (see flagRevision): the
// changelog and manifest groups, the tree manifests (none here: an empty
// chunk), then for each filelog a chunk naming it and its revisions; each chunk is a big-endian length (itself included)
// and, for a revision, 5 nodes, 2 bytes of flags and the delta.
func flagInChangegroup(data []byte, file string, flag uint16) bool {
	pos := 0
	chunk := func() []byte {
		if pos+4 > len(data) {
			return nil
		}
		n := int(binary.BigEndian.Uint32(data[pos:]))
		if n == 0 { // end of a group
			pos += 4
			return nil
		}
		if n < 4 || pos+n > len(data) {
			pos = len(data)
			return nil
		}
		c := data[pos+4 : pos+n]
		pos += n
		return c
	}
	for group := 0; group < 3; {
		if chunk() == nil {
			group++
		}
	}
	for {
		name := chunk()
		if name == nil {
			return false
		}
		for c := chunk(); c != nil; c = chunk() {
			if string(name) == file && len(c) > 102 {
				binary.BigEndian.PutUint16(c[100:], binary.BigEndian.Uint16(c[100:])|flag)
				c[len(c)-1] ^= 0x20
				return true
			}
		}
	}
}

// netCase is one clone or series of pulls over the network.
type netCase struct {
	name   string
	src    source
	server *oracle // whose hg serve (or hg at the end of ssh) answers
	ssh    bool
	public bool     // a publishing server (else phases.publish=false)
	stream bool     // clone --stream
	cg3    bool     // experimental.changegroup3 on both ends (hg 6.3)
	pulls  []string // pull -r each of these revisions of the source, then everything
	init   []string // format of the repository pulled into
}

// TestCorpusNetwork clones and pulls from hg serve over HTTP and from hg
// over ssh, as hgfs and as hg of both versions, and compares.
func TestCorpusNetwork(t *testing.T) {
	t.Parallel()
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	dir := t.TempDir()
	rich, hist := findSource(t, srcs, "rich"), findSource(t, srcs, "history")

	var cases []netCase
	for _, srv := range ors {
		for _, ssh := range []bool{false, true} {
			proto := "http"
			if ssh {
				proto = "ssh"
			}
			p := "rich-" + srv.Name + "-" + proto
			cases = append(cases, netCase{name: p + "-clone", src: rich, server: srv, ssh: ssh})
			// Over ssh, hg 6.3 streams and hg 7 pulls: the transport is
			// the same for both.
			if !ssh || srv == ors[0] {
				cases = append(cases, netCase{name: p + "-clone-stream", src: rich, server: srv, ssh: ssh, stream: true})
			}
			if !ssh || srv != ors[0] {
				cases = append(cases, netCase{name: p + "-pull", src: rich, server: srv, ssh: ssh, pulls: []string{"5", "19", "24"}})
			}
		}
	}
	cases = append(cases,
		netCase{name: "rich-cg3-http-clone", src: rich, server: ors[0], cg3: true},
		netCase{name: "rich-http-pull-to-bookmarks-in-store", src: rich, server: ors[0], pulls: []string{"19"},
			init: []string{"--config", "format.bookmarks-in-store=true"}},
		netCase{name: "rich-http-pull-to-persistent-nodemap", src: rich, server: ors[0], pulls: []string{"19"},
			init: []string{"--config", "format.use-persistent-nodemap=true"}},
		netCase{name: "history-http-clone", src: hist, server: ors[0], public: true},
		netCase{name: "history-ssh-clone", src: hist, server: ors[0], public: true, ssh: true},
		netCase{name: "history-http-clone-stream", src: hist, server: ors[len(ors)-1], public: true, stream: true},
		netCase{name: "history-http-pull", src: hist, server: ors[len(ors)-1], public: true, pulls: []string{"500", "1500", "2500"}},
	)
	for _, s := range srcs {
		if s.name == "history" || s.name == "rich" {
			continue
		}
		cases = append(cases, netCase{name: s.name + "-http-clone-stream", src: s, server: s.maker, stream: true})
		if s.maker != ors[0] {
			cases = append(cases, netCase{name: s.name + "-http-clone", src: s, server: s.maker})
		}
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cdir := filepath.Join(dir, label(tc.name))
			os.Mkdir(cdir, 0o755)
			var cfg []string // for both ends
			rc := hgConfigRC
			if !tc.public {
				cfg = append(cfg, "--config", "phases.publish=false")
				rc += "[phases]\npublish = false\n"
			}
			if tc.cg3 {
				cfg = append(cfg, "--config", "experimental.changegroup3=true")
				rc += "[experimental]\nchangegroup3 = true\n"
			}
			if tc.stream {
				// The generated repositories have secret changesets,
				// which a server streams only when told to.
				cfg = append(cfg, "--config", "server.uncompressedallowsecret=true")
				rc += "[server]\nuncompressedallowsecret = true\n"
			}
			var url string
			var remote []string // client options naming how to reach the server
			if tc.ssh {
				hgrc := filepath.Join(cdir, "remote.rc")
				if err := os.WriteFile(hgrc, []byte(rc), 0o644); err != nil {
					t.Fatal(err)
				}
				url = "ssh://user@host/" + tc.src.dir
				remote = []string{"--ssh", fakeSSHScript(t, cdir, hgrc), "--remotecmd", tc.server.Path}
			} else {
				url = tc.server.Serve(t, tc.src.dir, append(append([]string{}, hgConfig...), cfg...)...)
			}
			if tc.pulls == nil {
				args := []string{"clone", "-U"}
				if tc.stream {
					args = append(args, "--stream")
				}
				args = append(append(append(args, cfg...), remote...), url)
				var wants []outcome
				for _, o := range ors {
					d := filepath.Join(cdir, o.Name)
					out, errOut, code := o.result(t, cdir, append(args, d)...)
					wants = append(wants, normalize(outcome{d, out, errOut, code}))
				}
				got := filepath.Join(cdir, "hgfs")
				out, errOut, code := hgfsRun(cdir, append(args, got)...)
				compareOutcomes(t, ors, wants, normalize(outcome{got, out, errOut, code}))
				if tc.stream && code == 0 && wants[0].code == 0 && strings.Contains(wants[0].out, "streaming all changes") {
					// The stream carries the revlogs as they are; the
					// destination's layout is the local default, as hg's.
					sameStoreFiles(t, ors[0].Name, wants[0].repo, "hgfs", got, revlogFile)
				}
				return
			}
			// Pulls: the cut points, then everything.
			repos := map[string]string{}
			for _, name := range append(oracleNames(ors), "hgfs") {
				repos[name] = filepath.Join(cdir, name)
			}
			for _, o := range ors {
				o.run(t, cdir, append([]string{"init", repos[o.Name]}, tc.init...)...)
			}
			ors[0].run(t, cdir, append([]string{"init", repos["hgfs"]}, tc.init...)...)
			steps := append(append([]string{}, tc.pulls...), "")
			for i, rev := range steps {
				args := append(append([]string{"pull"}, cfg...), remote...)
				if rev != "" {
					node := strings.TrimSpace(tc.src.maker.run(t, tc.src.dir, "log", "-r", rev, "-T", "{node}"))
					args = append(args, "-r", node)
				}
				args = append(args, url)
				var wants []outcome
				for _, o := range ors {
					out, errOut, code := o.result(t, repos[o.Name], args...)
					wants = append(wants, normalize(outcome{repos[o.Name], out, errOut, code}))
				}
				out, errOut, code := hgfsRun(repos["hgfs"], args...)
				got := normalize(outcome{repos["hgfs"], out, errOut, code})
				if i < len(steps)-1 {
					// Between pulls: output and changesets with phases
					// and bookmarks only; the full comparison is at the end.
					for j := range wants {
						wants[j].repo = ""
					}
					got.repo = ""
					compareOutcomes(t, ors, wants, got)
					if code != 0 {
						return
					}
					w := ors[0].run(t, repos[ors[0].Name], "log", "--hidden", "-r", "all()", "-T", "{rev}:{node} {phase} {bookmarks}\n")
					g := ors[0].run(t, repos["hgfs"], "log", "--hidden", "-r", "all()", "-T", "{rev}:{node} {phase} {bookmarks}\n")
					if w != g {
						t.Errorf("after pull -r %s: changesets differ:\n%s", rev, testenv.Diff(ors[0].Name, w, "hgfs", g))
					}
					continue
				}
				compareOutcomes(t, ors, wants, got)
			}
		})
	}
}

func oracleNames(ors []*oracle) []string {
	var out []string
	for _, o := range ors {
		out = append(out, o.Name)
	}
	return out
}

// TestCorpusLocalClone clones local repositories of every kind and
// format with hgfs and with hg of both versions: the same outcome, and
// revlogs copied byte for byte where hg copies.
func TestCorpusLocalClone(t *testing.T) {
	t.Parallel()
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	dir := t.TempDir()
	for _, s := range srcs {
		t.Run(s.name, func(t *testing.T) {
			cdir := filepath.Join(dir, label(s.name))
			os.Mkdir(cdir, 0o755)
			// A copy of its own (copySource): hg pulls instead of
			// copying where another test's hg process holds the lock.
			src := copySource(t, s, cdir)
			var wants []outcome
			for _, o := range ors {
				d := filepath.Join(cdir, o.Name)
				out, errOut, code := o.result(t, cdir, "clone", "-U", src, d)
				wants = append(wants, outcome{d, out, errOut, code})
			}
			got := filepath.Join(cdir, "hgfs")
			out, errOut, code := hgfsRun(cdir, "clone", "-U", src, got)
			compareOutcomes(t, ors, wants, outcome{got, out, errOut, code})
			// A copy is byte for byte; where hg pulled instead (hidden
			// or secret changesets), the revisions are what counts, and
			// the state comparison has them.
			if code == 0 && wants[0].code == 0 && !strings.Contains(wants[0].out, "requesting all changes\n") {
				sameStoreFiles(t, ors[0].Name, wants[0].repo, "hgfs", got, revlogFile)
			}
		})
	}
}

// copySource copies s into cdir/src, a copy of the test's own: the other
// tests' hg processes of either version write their caches (branch3-*
// from hg 7, say) into the shared source while this one runs, holding
// its lock, and a local clone copies only when it gets the lock at once.
func copySource(t *testing.T, s source, cdir string) string {
	t.Helper()
	src := filepath.Join(cdir, "src")
	if out, err := exec.Command("cp", "-a", s.dir, src).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", s.dir, err, out)
	}
	return src
}

// serveBoth serves src with hgfs serve and with the hg serve of the
// Mercurial that wrote it (hgConfig and cfg for both). ok is false where
// hgfs serve cannot open the repository, which is only allowed where hg
// 6.3 cannot either, with its words.
func serveBoth(t *testing.T, ors []*oracle, s source, src string, cfg []string) (hgfsURL, hgURL string, ok bool) {
	t.Helper()
	hgfsURL, _, _, failure := tryServeBinary(t, src, append(append([]string{}, hgConfig...), cfg...)...)
	if failure != "" {
		_, errOut, code := ors[0].result(t, src, "log", "-r", "null", "-T", "")
		if code == 0 || !strings.Contains(failure, "stderr:\n"+errOut) {
			t.Fatalf("%s\n%s opening the repository: exit %d\n%s", failure, ors[0].Name, code, errOut)
		}
		return "", "", false
	}
	return hgfsURL, s.maker.Serve(t, src, append(append([]string{}, hgConfig...), cfg...)...), true
}

// TestCorpusServe has hg of both versions stream-clone every kind of
// repository from hgfs serve, and compares with the same clone from the
// hg serve of the Mercurial that wrote it.
func TestCorpusServe(t *testing.T) {
	t.Parallel()
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	dir := t.TempDir()
	for _, s := range srcs {
		t.Run(s.name, func(t *testing.T) {
			cdir := filepath.Join(dir, label(s.name))
			os.Mkdir(cdir, 0o755)
			cfg := []string{"--config", "phases.publish=false", "--config", "server.uncompressedallowsecret=true"}
			// A copy of its own: the other tests' hg processes of either
			// version write their caches (branch3-* from hg 7, say)
			// into the shared source while this one runs, and a stream
			// carries whatever caches the repository has at that moment.
			src := copySource(t, s, cdir)
			// Only the caches of the Mercurial that serves it: a hg 7
			// process reading the shared source leaves branch3-* and
			// rbc-*-v2 there, which hgfs serve sends (it copies the
			// caches of both versions) and hg 6.3's serve does not know.
			if err := os.RemoveAll(filepath.Join(src, ".hg", "cache")); err != nil {
				t.Fatal(err)
			}
			// Warm: hg serve writes a cache it lacks while it serves the
			// first clone, which the second would then carry too.
			s.maker.result(t, src, "debugupdatecaches")
			hgfsURL, hgURL, ok := serveBoth(t, ors, s, src, cfg)
			if !ok {
				return
			}
			for _, o := range ors {
				t.Run(o.Name, func(t *testing.T) {
					want := filepath.Join(cdir, o.Name+"-from-hg")
					out, errOut, code := o.result(t, cdir, "clone", "-U", "--stream", hgURL, want)
					got := filepath.Join(cdir, o.Name+"-from-hgfs")
					gout, gerr, gcode := o.result(t, cdir, "clone", "-U", "--stream", hgfsURL, got)
					// The URLs differ; the rest of the output must not.
					gout = strings.ReplaceAll(gout, hgfsURL, hgURL)
					compareOutcomes(t, []*oracle{o}, []outcome{normalize(outcome{want, out, errOut, code})},
						normalize(outcome{got, gout, gerr, gcode}))
					if gcode == 0 && code == 0 && strings.Contains(out, "streaming all changes") {
						sameStoreFiles(t, o.Name+"'s clone from hg", want, o.Name+"'s clone from hgfs", got, revlogFile)
					}
				})
			}
		})
	}
}

// TestCorpusServePull has hg clone every kind of repository (hg of both
// versions the rich histories, the one that wrote it the others) from
// hgfs serve with a changegroup, cut at a third of its history (clone
// -r), pull to two thirds (pull -r), then, after the source moved a
// bookmark and published changesets, look at and pull the rest
// (incoming, pull), and compares each step with the same one from
// the hg serve of the Mercurial that wrote it: output, exit status, every
// changeset with its phase and bookmarks, the obsolescence markers, and
// hg verify (for the real history, after the last step only).
func TestCorpusServePull(t *testing.T) {
	t.Parallel()
	ors := startOracles(t)
	srcs := corpusSources(t, ors)
	dir := t.TempDir()
	for _, s := range srcs {
		t.Run(s.name, func(t *testing.T) {
			cdir := filepath.Join(dir, label(s.name))
			os.Mkdir(cdir, 0o755)
			src := copySource(t, s, cdir)
			hgfsURL, hgURL, ok := serveBoth(t, ors, s, src, []string{"--config", "phases.publish=false"})
			if !ok {
				return
			}
			served := strings.Fields(s.maker.run(t, src, "log", "-r", "not secret()", "-T", "{node}\n"))
			if len(served) < 3 {
				t.Skipf("%d changesets served", len(served))
			}
			cut1, cut2 := served[len(served)/3], served[2*len(served)/3]
			// The formats are the server's business: their clients are
			// the Mercurial that wrote them, and both Mercurials pull
			// the rich histories. Real history is read in seconds: its
			// cuts are later (the clone still carries most of it) and
			// its state is compared at the end only.
			light := s.name == "history"
			clients := []*oracle{s.maker}
			if s.name == "rich" || strings.HasSuffix(s.name, "-default") {
				clients = ors
			}
			if light {
				cut1, cut2 = served[len(served)*4/5], served[len(served)*9/10]
			}
			// step runs args (with the URL last) against both servers in
			// the repositories of each Mercurial and compares.
			step := func(what string, clone bool, args ...string) {
				for _, o := range clients {
					want := filepath.Join(cdir, o.Name+"-from-hg")
					got := filepath.Join(cdir, o.Name+"-from-hgfs")
					run := func(url, repo string) outcome {
						a := append(append([]string{}, args...), url)
						wd := repo
						if clone {
							a, wd = append(a, repo), cdir
						}
						out, errOut, code := o.result(t, wd, a...)
						return outcome{repo, strings.ReplaceAll(out, url, "URL"), strings.ReplaceAll(errOut, url, "URL"), code}
					}
					w, g := run(hgURL, want), run(hgfsURL, got)
					if w.code != g.code || w.out != g.out || w.err != g.err {
						t.Errorf("%s %s: hg serve and hgfs serve answer differently:\n%s", o.Name, what,
							testenv.Diff("from hg serve", fmt.Sprintf("exit %d\n%s%s", w.code, w.out, w.err), "from hgfs serve", fmt.Sprintf("exit %d\n%s%s", g.code, g.out, g.err)))
						continue
					}
					if w.code != 0 || light && what != "pull" {
						continue
					}
					o.verify(t, got)
					ws, gs := o.state(t, want), o.state(t, got)
					ws = append(ws, section{"phases", o.run(t, want, "phase", "--hidden", "-r", "all()")}, section{"bookmarks", o.run(t, want, "bookmarks")})
					gs = append(gs, section{"phases", o.run(t, got, "phase", "--hidden", "-r", "all()")}, section{"bookmarks", o.run(t, got, "bookmarks")})
					for _, sw := range ws {
						if gt := sectionText(gs, sw.name); gt != sw.text {
							t.Errorf("%s %s: %s differs:\n%s", o.Name, what, sw.name, testenv.Diff("from hg serve", sw.text, "from hgfs serve", gt))
						}
					}
				}
			}
			step("clone -r", true, "clone", "-U", "-r", cut1)
			step("pull -r", false, "pull", "-r", cut2)
			// The source moves on: a bookmark moves, changesets are
			// published.
			s.maker.run(t, src, "bookmark", "-f", "-r", cut2, "corpus-moved")
			s.maker.run(t, src, "phase", "--public", "-r", cut1)
			step("incoming", false, "incoming", "-T", "{node} {phase} {bookmarks}\n")
			step("pull", false, "pull")
		})
	}
}
