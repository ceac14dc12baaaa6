package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hgfs/hgfs/testenv"
)

// logCases are hgfs log invocations compared byte for byte (stdout,
// stderr, exit status) with hg 6.3 on the real history and the rich
// generated repository: templates, styles, -q, filters and FILE.
var logCases = [][]string{
	{"log", "-q", "-l", "3"}, {"log", "-q", "--debug", "-l", "2"},
	{"log", "-T", "{rev}:{node|short} {branch} {phase}\n", "-l", "20"},
	{"log", "-T", "{rev} {node} {p1node} {p2node} {p1rev} {p2rev}\n", "-r", "merge()"},
	{"log", "-T", "{author|user} {author|person} <{author|email}> {author|domain}\n", "-l", "30"},
	{"log", "-T", "{date|isodate} {date|isodatesec} {date|rfc822date} {date|rfc3339date} {date|shortdate} {date|hgdate} {date|date}\n", "-l", "30"},
	{"log", "-T", "{desc|firstline|strip}\n{desc|json}\n", "-l", "40"},
	{"log", "-T", "{tags} [{bookmarks}] {tags % '<{tag}>'} {join(files, ',')}\n", "-l", "40"},
	{"log", "-T", "{files % '{file}\\n'}{file_adds % 'A {file_add}\\n'}{file_dels % 'R {file_del}\\n'}{file_mods % 'M {file_mod}\\n'}", "-r", "0:30"},
	{"log", "-T", "{parents}|{parents % '{rev}:{node|short},'}|{parents|json}|{manifest}|{extras}|{extras|json}\n", "-r", "merge() or 0:5"},
	{"log", "-T", "{rev|json} {date|json} {files|json} {tags|json} {author|json} {branch|json}\n", "-l", "25"},
	{"log", "-T", "{if(tags, 'T', 'n')}{ifeq(branch, 'default', '', 'X')}{ifcontains('tip', tags, '!')} {pad(rev, 6)}|{pad(rev, 6, '.', True)}|{separate('-', rev, '', branch)}|{rev + 1}{rev * 2}{-rev}\n", "-l", "15"},
	{"log", "-T", "{label('x', rev)} {startswith('Merge', desc)} {indent(desc, '  ')}\n", "-l", "15"},
	{"log", "-T", "{desc|escape|addbreaks} {desc|upper|lower} {node|short|upper} {'lit\\x41'} {r'raw\\n'} \\{ {graphnode}{phaseidx}\n", "-l", "15"},
	{"log", "-T", "literal text\n", "-l", "2"},
	{"log", "-T", "{shortest(node)} {shortest(node, 1)} {shortest(node, 12)} {author|emailuser} {files|count} {desc|count} {desc|stringify|tabindent}\n", "-l", "60"},
	{"log", "-T", "{nosuchkeyword}x\n", "-l", "2"},
	{"log", "-T", "json", "-l", "5"}, {"log", "-T", "json", "-q", "-l", "3"}, {"log", "-T", "json", "-v", "-r", "0:3"},
	{"log", "-T", "json", "--debug", "-r", "0:3"}, {"log", "-T", "json", "-r", "none()"},
	{"log", "-T", "{rev", "-l", "1"}, {"log", "-T", "{rev|}", "-l", "1"}, {"log", "-T", "{if(rev)}", "-l", "1"},
	{"log", "-T", "{'unterminated}", "-l", "1"}, {"log", "-T", "{rev|nosuchfilter}", "-l", "1"},
	{"log", "-k", "merge", "-q"}, {"log", "-k", "README", "-k", "test", "-q", "-l", "30"},
	{"log", "-b", "default", "-q", "-l", "5"}, {"log", "-u", "mpm@selenic.com", "-q", "-l", "5"},
	{"log", "-q", "README"}, {"log", "-q", "mercurial"}, {"log", "-q", "glob:*.py"}, {"log", "-q", "-r", "100:0", "hg"},
	{"log", "-q", "nosuchfile"},
	{"log", "-r", "heads()", "-q"}, {"log", "-r", "2:5", "-r", "1", "-q"}, {"log", "-r", "foo bar"}, {"log", "-r", "nosuch()"},
	{"log", "-G"}, {"log", "-G", "-q", "-l", "300"}, {"log", "-G", "-v", "-l", "40"}, {"log", "-G", "--debug", "-l", "10"},
	{"log", "-G", "-q", "-r", "merge()"}, {"log", "-G", "-q", "-r", "file(README)"}, {"log", "-G", "-q", "-r", "all() - 10:200"},
	{"log", "-G", "-T", "{rev}", "-r", "keyword(fix) or merge()"}, {"log", "-G", "-q", "README"}, {"log", "-G", "-q", "-k", "merge"},
	{"log", "-G", "-q", "-r", "0:40 or 2900:"}, {"log", "-G", "-q", "-r", "heads(all()) or roots(all())"},
	{"log", "-G", "-T", "{rev}\n{desc}\n", "-r", "2000::2100"},
	{"log", "-T", "xml", "-l", "30"}, {"log", "-T", "xml", "-v", "-l", "40"}, {"log", "-T", "xml", "--debug", "-l", "10"},
	{"log", "-T", "xml", "-v", "-r", "131 or 1089:1300 or 2384 or file('re:.*renamed.*')"},
	{"log", "-T", "{rev} {file_copies} {file_copies % '<{name}|{source}|{path}>'} {file_copies|json}\n", "-r", "131 or 1089:1300 or 2384 or file('re:.*renamed.*')"}, {"log", "-T", "xml", "-r", "none()"},
	{"log", "-T", "compact", "-l", "40"}, {"log", "-T", "compact", "-v", "-l", "20"}, {"log", "-T", "compact", "-q", "-l", "5"},
	{"log", "-T", "compact", "--debug", "-l", "5"}, {"log", "-T", "compact", "-G", "-l", "30"}, {"log", "-T", "compact", "-r", "merge()"},
	{"log", "-T", "phases", "-l", "10"}, {"log", "-T", "phases", "-v", "-l", "10"}, {"log", "-T", "phases", "-q", "-l", "3"},
	{"log", "-T", "phases", "--debug", "-l", "3"},
	{"manifest", "-T", "json"}, {"manifest", "-T", "json", "-r", "0"}, {"cat", "-T", "json", "-r", "0", "README", "nosuch"},
	{"cat", "-T", "json", "nosuch"},
	{"log", "-r", "reverse(0::5) and not merge()", "-T", "{rev} "}, {"log", "-r", "limit(descendants(2), 3)", "-v"},
	{"log", "-q", "-M", "-l", "20"}, {"log", "-q", "-m", "-l", "10"}, {"log", "-q", "-d", ">2006-08-01"}, {"log", "-q", "-d", "2006-02-14 to 2006-03-01", "-M"},
	{"log", "-q", "-f", "-l", "10"}, {"log", "-q", "-f", "-r", "2000", "-l", "30"}, {"log", "-q", "--follow-first", "-r", "2000", "-l", "30"},
	{"log", "-q", "-f", "-r", "tip", "-r", "1", "-l", "5", "-M"},
	{"log", "-q", "-I", "glob:*.py", "-l", "20"}, {"log", "-q", "-X", "mercurial", "-l", "20"},
	{"log", "-T", "{p1}|{p2}|{p1.rev}|{p1.node|short}|{p1.desc|firstline}|{p2.author}|{extras.branch}|{date.unixtime}|{date.tzoffset}|{get(extras, 'branch')}|{get(extras, 'nosuch')}|{p1 % '{rev}'}\n", "-r", "0:20 or merge()"},
	{"log", "-T", "{revset('parents(%d)', rev)}|{revset('%d:%d', 1, 3) % '<{rev}:{revision}:{node|short}>'}|{revset('children(%s)', node) % '{desc|firstline}'}\n", "-l", "30"},
	{"log", "-T", "{word(1, desc)}|{word(-1, 'a,b,c', ',')}|{word(9, desc)}|{sub('[aeiou]', '_', desc|firstline)}|{sub(r'(\\w+) (\\w+)', r'\\2 \\1', author)}|{sub('(?P<x>e)', '<\\g<x>>', branch)}\n", "-l", "40"},
	{"log", "-T", "{rev.x}", "-l", "1"}, {"log", "-T", "{desc.x}", "-l", "1"}, {"log", "-T", "{get(desc, 'x')}", "-l", "1"},
	{"log", "-T", "{word('x', desc)}", "-l", "1"}, {"log", "-T", "{sub('(', '', desc)}", "-l", "1"}, {"log", "-T", "{revset('%s', 'x y')}", "-l", "1"},
	{"log", "--debug", "-T", "{p1} {p2}\n", "-l", "5"},
	{"log", "-T", "{rev} {latesttag} {latesttagdistance} {date|age}\n"},
	{"log", "-T", "{changessincelatesttag} {latesttag % '<{tag}:{distance}:{changes}>'}\n", "-l", "30"},
	{"log", "-p", "-r", "0:40"}, {"log", "--stat", "-l", "150"}, {"log", "-p", "--stat", "-v", "-r", "2000:2030"},
	{"log", "-p", "-r", "merge()", "-l", "8"}, {"log", "--debug", "-p", "-r", "1:3"}, {"log", "-q", "-p", "-l", "3"},
	{"log", "-p", "-T", "{rev}\n", "-r", "2400:2440"}, {"log", "-p", "-T", "compact", "-r", "100:110"},
	{"log", "-p", "--stat", "-r", "1000:1200", "README", "-I", "glob:**.py"}, {"log", "--stat", "-X", "**.py", "-r", "tip"},
	{"log", "-q", "-P", "2960", "-P", "2900", "-l", "20"}, {"log", "-q", "-P", "nosuch"}, {"log", "-q", "-P", "tip~3", "-l", "5"},
	{"log", "-q", "-B", "feature"}, {"log", "-q", "-B", "main-bm", "-B", "feature"}, {"log", "-q", "-B", "nosuch"},
	{"log", "-q", "-I", "mercurial/**", "-X", "**.c", "-l", "30"}, {"log", "-q", "-I", "re:.*\\.c$", "README"},
}

// logRevsets are revsets compared as `log -r SPEC -T '{rev} '`:
// membership, order and errors.
var logRevsets = []string{
	"0", "tip", "null", ".", "-1", "-3", "2:5", "5:2", ":3", "3:", ":", "null:2",
	"::3", "3::", "1::4", "heads(all())", "heads(0:5)", "roots(2:6)", "head()",
	"branch(default)", "branch(tip)", "branch('re:.*')", "branch(nosuchbranch)", "branch('literal:zz')",
	"ancestors(5)", "ancestors(5, depth=1)", "descendants(1)", "descendants(1, 2)",
	"draft()", "public()", "secret()", "not public()", "!draft()",
	"bookmark()", "tag()", "tag(tip)", "tag('re:.')", "tag(nosuch)", "bookmark(nosuch)",
	"keyword(fix)", "keyword(README)", "user(a)", "author(test)", "desc(merge)",
	"only(tip)", "only(tip, 2)", "tip % 2", "2::tip - 4", "2:6 and not 4", "2:6 & !merge()",
	"3 or 1 or 2", "3 + 1 | 2", "reverse(0:4)", "sort(0:4, -rev)", "sort(all(), -date)", "sort(3 or 1 or 2, 'user -rev')",
	"limit(all(), 3)", "limit(reverse(all()), 2, 1)", "first(5:0)", "last(all(), 2)", "last(0:5)",
	"max(all())", "min(2:)", "merge()", "p1(tip)", "p2(all())", "parents(tip)", "children(0)", "tip^", "tip~2", "tip^2",
	"file(README)", "file('glob:*.txt')", "file('re:.*')", "date('>2000-01-01')", "date('<1990')", "date('2023')",
	"present(nosuch)", "present(0)", "rev(1)", "rev(999)", "id(tip)", "closed()", "all()", "none()",
	"0:2 and 1:3", "reverse(5:0) and 2:4", "(1 or 0) and 0:5", "limit(5:0, 3) and 0:5",
	"foo bar", "nosuch()", "nosuchrev", "1 +", "(", "'unterminated", "sort(all(), nokey)",
	"ancestors()", "limit(all(), x)", "1:2:3", "x::", "::", "-", "a-b-c", "all(1)",
	"date(foo)", "heads(", "tip and", "tip^3", "branch()", "parents()",
	"adds(README)", "adds('glob:*.py')", "adds(mercurial)", "adds('relglob:*.txt')", "modifies('mercurial/hg.py')",
	"modifies('path:mercurial/hg.py')", "modifies('re:.*')", "removes('**')", "removes('path:mercurial')", "adds()",
	"file(mercurial)", "file('relglob:*.py')", "grep('Merge|merge')", "grep('^[a-z]+$')", "grep(x, y)",
}

func TestLogLikeHg(t *testing.T) {
	// As the command server runs (testenv.HgEnv).
	t.Setenv("HGPLAIN", "1")
	for name, dir := range map[string]string{
		"history": testenv.CorpusRepo(t, testenv.CorpusHistory),
		"rich":    testenv.Generate(t, testenv.Rich),
	} {
		t.Run(name, func(t *testing.T) {
			cases := logCases
			for _, spec := range logRevsets {
				cases = append(cases, []string{"log", "-r", spec, "-T", "{rev} "})
			}
			compareLog(t, testenv.StartHgServer(t, dir), dir, cases)
		})
	}
}

// TestLogLikeHg7 compares the template, graph and JSON cases with hg 7
// on the rich repository (hg 7 prints them as hg 6.3 does).
func TestLogLikeHg7(t *testing.T) {
	t.Setenv("HGPLAIN", "1")
	h7 := testenv.Hg7(t)
	dir := testenv.Generate(t, testenv.Rich)
	compareLog(t, h7.StartServer(t, dir), dir, logCases)
}

// compareLog runs each command with hg (through hs) and hgfs in dir and
// compares stdout, stderr and the exit status.
func compareLog(t *testing.T, hs *testenv.HgServer, dir string, cases [][]string) {
	t.Helper()
	for _, args := range cases {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			ho, he, hc := hs.Run(t, append([]string{"--cwd", dir}, args...)...)
			fo, fe, fc := hgfsIn(dir, args...)
			// hgfs names itself where hg does.
			want := strings.ReplaceAll(string(he), "hg: parse error", "hgfs: parse error")
			if d := testenv.Diff("hg", string(ho), "hgfs", fo); d != "" {
				t.Errorf("stdout differs:\n%s", d)
			}
			if d := testenv.Diff("hg (stderr)", want, "hgfs (stderr)", fe); d != "" {
				t.Errorf("stderr differs:\n%s", d)
			}
			if hc != fc {
				t.Errorf("exit status: hg %d, hgfs %d", hc, fc)
			}
		})
	}
}

// TestLogSubtemplateFuncs compares calls of three or more arguments
// inside a quoted template after %, which overflowed the stack once (the
// quoted template's argument list was flattened a second time).
func TestLogSubtemplateFuncs(t *testing.T) {
	t.Setenv("HGPLAIN", "1")
	tmp := t.TempDir()
	testenv.Hg(t, tmp, "init", "r")
	dir := filepath.Join(tmp, "r")
	for name, content := range map[string]string{"a": "a\n", "b": "b\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Hg(t, dir, "commit", "-q", "-A", "-m", "0")
	testenv.Hg(t, dir, "tag", "-r", "0", "a")
	testenv.Hg(t, dir, "bookmark", "-r", "0", "other")
	testenv.Hg(t, dir, "bookmark", "bm")
	var cases [][]string
	for _, tmpl := range []string{
		`{files % '{ifeq(file, "a", "b")}'}\n`,
		`{files % '{sub("a","b",file)}'}\n`,
		`{files % '{ifcontains(file, files, "y")}'}\n`,
		`{bookmarks % '{ifeq(bookmark, active, "*")}'}\n`,
		`{bookmarks % '{bookmark}={current} '}\n`,
		`{tags % '{ifeq(tag,"a","b")}'}\n`,
		`{files % '{files % "{ifeq(file, file, "x", "y")}"}'}\n`,
	} {
		cases = append(cases, []string{"log", "-T", tmpl})
	}
	for _, m := range testenv.Mercurials(t) {
		t.Run(m.Name, func(t *testing.T) { compareLog(t, m.StartServer(t, dir), dir, cases) })
	}
}

// TestLogRefusesUnsupported checks that what hgfs does not implement is
// refused by name, never printed as something else.
func TestLogRefusesUnsupported(t *testing.T) {
	dir := testenv.Generate(t, testenv.Small)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "-T", "changelog"}, "style -T changelog"},
		{[]string{"log", "-G", "-T", "json"}, "-T json with -G"},
		{[]string{"log", "-T", "status"}, "style -T status"},
		{[]string{"log", "-T", "{latesttag('re:x')}"}, "function latesttag()"},
		{[]string{"log", "-T", "{rev|hex}"}, "filter 'hex'"},
		{[]string{"log", "-T", "{search('a', desc)}"}, "function search()"},
		{[]string{"log", "-r", "follow(a)"}, "follow() with arguments"}, {[]string{"log", "-r", "matching(1)"}, "predicate matching()"},
		{[]string{"log", "-r", "sort(all(), topo)"}, "sort key 'topo'"},
		{[]string{"log", "-f", "a"}, "--follow with FILE"},
		{[]string{"log", "-p", "-G"}, "-p and --stat with -G"},
		{[]string{"log", "-g", "-p"}, "--git"}, {[]string{"log", "--copies"}, "--copies"},
		{[]string{"log", "--removed"}, "--removed"}, {[]string{"log", "-L", "a,1:2"}, "--line-range"},
		{[]string{"log", "--stat", "-T", "json"}, "-p and --stat with -T json"},
	} {
		_, e, code := hgfsIn(dir, c.args...)
		if code != 255 || !strings.Contains(e, c.want) || !strings.Contains(e, "not supported") {
			t.Errorf("%v: exit %d, %q; want a refusal naming %q", c.args, code, e, c.want)
		}
	}
}

// TestLogGraphStyles compares -G outside HGPLAIN, where hg draws
// grandparent edges ":" and missing parents "~".
func TestLogGraphStyles(t *testing.T) {
	dir := testenv.CorpusRepo(t, testenv.CorpusHistory)
	t.Setenv("HGPLAINEXCEPT", "graph")
	for _, args := range [][]string{
		{"log", "-G", "-q", "-r", "merge()"}, {"log", "-G", "-q", "-r", "file(README) or 2000:2010"},
		{"log", "-G", "-T", "{rev}\n", "-r", "keyword(fix) and 2000:"},
	} {
		cmd := testenv.Command(dir, testenv.HgPath(t), args...)
		cmd.Env = append(cmd.Env, "HGPLAINEXCEPT=graph")
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("hg %v: %v", args, err)
		}
		got, stderr, code := hgfsIn(dir, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("hgfs %v: exit %d, %s", args, code, stderr)
		}
		if d := testenv.Diff("hg", string(want), "hgfs", got); d != "" {
			t.Errorf("%v differs:\n%s", args, d)
		}
		if !strings.Contains(got, ":") {
			t.Errorf("%v: no grandparent edge drawn", args)
		}
	}
}

// TestLogDamagedManifestLikeHg: hg opens the manifest log only when a
// command reads a manifest, so log works on a repository whose
// 00manifest.i is not a revlog; hgfs opened it with the repository and
// failed every command. Log (and log -v, whose files come from the
// changelog) must print what each hg prints; what reads manifests still
// fails, with hg's message.
func TestLogDamagedManifestLikeHg(t *testing.T) {
	dir := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	// Tags come from .hgtags in the heads' manifests; hg reads them from
	// its tags cache, written here before the damage (without it hg's
	// log fails too).
	testenv.Hg(t, dir, "log", "-l", "1")
	if err := os.WriteFile(filepath.Join(dir, ".hg", "store", "00manifest.i"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, hg := range testenv.Mercurials(t) {
		// What reads a manifest aborts with hg's words for the header.
		for _, args := range [][]string{{"log"}, {"log", "-v", "-l", "3"}, {"log", "-T", "{rev} {files}\n"}, {"manifest"}, {"cat", "-r", "tip", "README"}} {
			sameAsHg(t, hg, dir, args...)
		}
	}
	_, fe, fc := hgfsIn(dir, "verify")
	if fc != 255 || !strings.Contains(fe, "unknown version (29282) in revlog 00manifest") {
		t.Errorf("hgfs verify on a damaged manifest log: exit %d\n%s", fc, fe)
	}
}

// TestCatDamagedFilelogLikeHg: a filelog whose index header hg refuses
// is named by its tracked path in hg 7's message (filelog display_id),
// not by its store name (here encoded: README is data/_r_e_a_d_m_e.i).
// hg 6.3 names it by its radix, "data/README"; hgfs speaks as hg 7,
// whose words are meant for users, and this checks that 6.3 still
// differs only there.
func TestCatDamagedFilelogLikeHg(t *testing.T) {
	dir := testenv.CopyRepo(t, testenv.Generate(t, testenv.Small))
	index := filepath.Join(dir, ".hg", "store", "data", "_r_e_a_d_m_e.i")
	if _, err := os.Stat(index); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(index, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	fo, fe, fc := hgfsIn(dir, "cat", "-r", "tip", "README")
	if fc != 255 || fo != "" || fe != "abort: unknown version (29282) in revlog README\n" {
		t.Errorf("hgfs cat of a damaged filelog: exit %d, stdout %q, stderr %q", fc, fo, fe)
	}
	for _, hg := range testenv.Mercurials(t) {
		if hg.Major() >= 7 {
			sameAsHg(t, hg, dir, "cat", "-r", "tip", "README")
			continue
		}
		_, he, err := hg.Result(t, dir, "cat", "-r", "tip", "README")
		if want := strings.Replace(fe, "revlog README", "revlog data/README", 1); err == nil || string(he) != want {
			t.Errorf("%s: %v, stderr %q; want it to differ from hgfs's only in the revlog's name", hg.Name, err, he)
		}
	}
}
