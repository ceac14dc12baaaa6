package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/revset"
	"github.com/hgfs/hgfs/templater"
)

func init() {
	register(&command{
		name:     "log",
		aliases:  []string{"history"},
		synopsis: "[OPTION]... [FILE]",
		help: `show revision history of entire repository or files

Prints changesets newest first in hg's default template (with -v the
files and full description, with --debug every field, with -q one
line each). -r selects revisions with hg's revset language: numbers,
nodes, tags, bookmarks, branches, ranges A:B, A::B, and predicates such
as heads(), branch(), ancestors(), descendants(), draft(), public(),
bookmark(), tag(), file(), keyword(), date(), user(), only(), limit(),
first(), last(), reverse(), sort(), adds(), modifies(), removes(),
grep(), follow(), combined with and/or/not/-.
-T takes a template in hg's template language ({rev}, {node|short},
{desc|firstline}, {files % '{file}\n'}, {p1.rev}, {get(extras, 'x')},
{word(0, desc)}, {sub(...)}, {revset(...)}, {latesttag}, {date|age},
...) or the styles json, xml, compact and phases.
FILE arguments select the changesets touching those paths (-I and -X
filter them by pattern); -G draws the revision graph as hg does; -f
follows the ancestors of the working directory's parent (or of -r);
-d, -M and -m filter by date and merges. -p and --stat add each
changeset's diff against its first parent (hg's plain format, with
hg's bdiff) and its diffstat. --git, --copies, --removed and -L, and
the predicates, keywords, filters and styles hgfs does not implement,
are refused by name. Hidden (obsolete) changesets are not shown.`,
		options: []option{
			{'r', "rev", optList, "", "show the specified revision or revset"},
			{'l', "limit", optInt, "", "limit number of changes displayed"},
			{'T', "template", optString, "", "display with template"},
			{'k', "keyword", optList, "", "do case-insensitive search for a given text"},
			{'b', "branch", optList, "", "show changesets within the given named branch"},
			{'u', "user", optList, "", "revisions committed by user"},
			{'G', "graph", optBool, "", "show the revision DAG"},
			{'f', "follow", optBool, "", "follow changeset history (without FILE arguments)"},
			{0, "follow-first", optBool, "", "only follow the first parent of merge changesets (DEPRECATED)"},
			{'d', "date", optString, "", "show revisions matching date spec"},
			{'M', "no-merges", optBool, "", "do not show merges"},
			{'m', "only-merges", optBool, "", "show only merges (DEPRECATED) (use -r \"merge()\" instead)"},
			{'I', "include", optList, "", "include names matching the given patterns"},
			{'X', "exclude", optList, "", "exclude names matching the given patterns"},
			{'p', "patch", optBool, "", "show patch"},
			{0, "stat", optBool, "", "output diffstat-style summary of changes"},
			{'P', "prune", optList, "", "do not display revision or any of its ancestors"},
			{'B', "bookmark", optList, "", "show changesets within the given bookmark"},
			// Options of hg log hgfs refuses by name (logUnsupported).
			{'g', "git", optBool, "", "use git extended diff format (not supported)"},
			{'C', "copies", optBool, "", "show copied files (not supported)"},
			{0, "removed", optBool, "", "include revisions where files were removed (not supported)"},
			{'L', "line-range", optList, "", "follow line range of specified file (not supported)"},
		},
		run: runLog,
	})
}

// logStyles are the names -T takes as hg's styles (map-cmdline.NAME and
// the formatter's); hgfs prints default, json, xml, compact and phases.
var logStyles = map[string]bool{
	"default": true, "json": true, "xml": true, "compact": true, "changelog": true,
	"phases": true, "status": true, "show": true, "bisect": true, "cbor": true, "pickle": true, "debug": true,
}

// logUnsupported are hg log's options hgfs declares only to refuse them
// by name.
var logUnsupported = []string{"git", "copies", "removed", "line-range"}

func runLog(ctx context.Context, c *cmdContext, args []string) error {
	for _, o := range logUnsupported {
		if c.opts.Changed(o) {
			return abortf("hgfs log: --%s is not supported", o)
		}
	}
	tmplSpec := c.opts.String("template")
	var tmpl *templater.Template
	if tmplSpec != "" && !logStyles[tmplSpec] {
		var err error
		if tmpl, err = templater.Parse(tmplSpec); err != nil {
			return parseFailure(c.ui, err)
		}
	} else if tmplSpec != "" && tmplSpec != "default" && tmplSpec != "json" && tmplSpec != "xml" && tmplSpec != "compact" && tmplSpec != "phases" {
		return abortf("hgfs log: the style -T %s is not supported by hgfs", tmplSpec)
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	root, err := c.repoRoot()
	if err != nil {
		return err
	}
	cwd, err := filepath.Rel(root, c.cwd)
	if err != nil || cwd == "." || strings.HasPrefix(cwd, "..") {
		cwd = ""
	}
	ev := revset.New(r, revset.Options{Cwd: filepath.ToSlash(cwd)})
	var revs []int
	follow := c.opts.Bool("follow") || c.opts.Bool("follow-first")
	if follow && len(args) > 0 {
		return abortf("hgfs log: --follow with FILE arguments is not supported")
	}
	if specs := c.opts.List("rev"); len(specs) > 0 {
		if revs, err = ev.Revs(specs); err != nil {
			return revsetFailure(c.ui, err)
		}
	} else if follow {
		// logcmdutil._initialrevs: the working directory's parent.
		if p, err := r.Lookup("."); err == nil && p >= 0 {
			revs = []int{p}
		}
	} else {
		vis, err := r.Visible()
		if err != nil {
			return abortf("%v", err)
		}
		for i := len(vis) - 1; i >= 0; i-- {
			revs = append(revs, vis[i])
		}
	}
	if follow && len(revs) > 0 {
		// dagop.revancestors, newest first.
		revs = ancestorsDesc(r, revs, c.opts.Bool("follow-first"))
	}
	graph := c.opts.Bool("graph")
	if graph && !sort.IsSorted(sort.Reverse(sort.IntSlice(revs))) {
		// -G walks newest first (logcmdutil's sort_revisions "desc").
		revs = append([]int(nil), revs...)
		sort.Sort(sort.Reverse(sort.IntSlice(revs)))
	}
	// logcmdutil._makerevset: the options become a revset filtering the
	// revisions in their order.
	var filters []string
	incl, excl := c.opts.List("include"), c.opts.List("exclude")
	if len(args) > 0 || len(incl) > 0 || len(excl) > 0 {
		match, err := logMatcher(args, incl, excl, filepath.ToSlash(cwd))
		if err != nil {
			return revsetFailure(c.ui, err)
		}
		slow := len(incl) > 0 || len(excl) > 0
		revs, err = filterFiles(r, revs, args, filepath.ToSlash(cwd), match, slow)
		if err != nil {
			return abortf("%v", err)
		}
	}
	// logcmdutil._opt2logrevset.
	if c.opts.Bool("no-merges") {
		filters = append(filters, "not merge()")
	}
	if c.opts.Bool("only-merges") {
		filters = append(filters, "merge()")
	}
	if d := c.opts.String("date"); c.opts.Changed("date") {
		filters = append(filters, "date("+quoteRevset(d)+")")
	}
	if ps := c.opts.List("prune"); len(ps) > 0 {
		var or []string
		for _, p := range ps {
			or = append(or, "ancestors("+quoteRevset(p)+")")
		}
		filters = append(filters, "not ("+strings.Join(or, " or ")+")")
	}
	if bs := c.opts.List("bookmark"); len(bs) > 0 {
		// scmutil.format_bookmark_revspec.
		var or []string
		for _, b := range bs {
			m := quoteRevset("literal:" + b)
			or = append(or, "(ancestors(bookmark("+m+")) - ancestors(head() and not bookmark("+m+")) - ancestors(bookmark() and not bookmark("+m+")))")
		}
		filters = append(filters, "("+strings.Join(or, " or ")+")")
	}
	if bs := c.opts.List("branch"); len(bs) > 0 {
		var or []string
		for _, b := range bs {
			name := b
			if rev, err := r.Lookup(b); err == nil {
				if cs, err := r.Changeset(rev); err == nil && !branchExists(r, b) {
					name = cs.Branch()
				}
			}
			or = append(or, "branch("+quoteRevset("literal:"+name)+")")
		}
		filters = append(filters, "("+strings.Join(or, " or ")+")")
	}
	for _, opt := range []struct{ name, fn string }{{"keyword", "keyword"}, {"user", "user"}} {
		vals := c.opts.List(opt.name)
		if len(vals) == 0 {
			continue
		}
		var or []string
		for _, v := range vals {
			if opt.name == "user" {
				v = "literal:" + v
			}
			or = append(or, opt.fn+"("+quoteRevset(v)+")")
		}
		filters = append(filters, "("+strings.Join(or, " or ")+")")
	}
	if len(filters) > 0 {
		sort.Strings(filters)
		if revs, err = ev.Filter(revs, []string{strings.Join(filters, " and ")}); err != nil {
			return revsetFailure(c.ui, err)
		}
	}
	if c.opts.Changed("limit") {
		if n := c.opts.Int("limit"); n <= 0 {
			return abortf("limit must be positive")
		} else if n < len(revs) {
			revs = revs[:n]
		}
	}
	patch, stat := c.opts.Bool("patch"), c.opts.Bool("stat")
	if (patch || stat) && (graph || tmplSpec == "json" || tmplSpec == "xml") {
		what := "-G"
		if !graph {
			what = "-T " + tmplSpec
		}
		return abortf("hgfs log: -p and --stat with %s are not supported by hgfs", what)
	}
	var diffMatch func(string) bool
	if len(args) > 0 || len(incl) > 0 || len(excl) > 0 {
		if diffMatch, err = logMatcher(args, incl, excl, filepath.ToSlash(cwd)); err != nil {
			return revsetFailure(c.ui, err)
		}
	}
	if tmplSpec == "json" {
		if graph {
			// hg interleaves the graph with the JSON text.
			return abortf("hgfs log: -T json with -G is not supported by hgfs")
		}
		return writeLogJSON(ctx, c.ui, r, revs)
	}
	if tmplSpec == "xml" {
		if graph {
			return abortf("hgfs log: -T xml with -G is not supported by hgfs")
		}
		b := []byte(templater.XMLHeader)
		for _, rev := range revs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if b, err = templater.XMLChangeset(b, r, rev, c.ui.verbose, c.ui.debug); err != nil {
				return abortf("%v", err)
			}
		}
		_, err := c.ui.out.Write(append(b, templater.XMLFooter...))
		return err
	}
	env := &templater.Env{Repo: r, Debug: c.ui.debug}
	var g *hgfmt.Graph
	if graph {
		g = hgfmt.NewGraph(r, revs, plainGraph())
	}
	var b []byte
	for _, rev := range revs {
		if err := ctx.Err(); err != nil {
			return err
		}
		var text []byte
		switch {
		case tmpl != nil:
			if text, err = tmpl.Render(env, rev); err != nil {
				return parseFailure(c.ui, err)
			}
		case tmplSpec == "compact":
			if text, err = templater.CompactChangeset(nil, r, rev, c.ui.quiet, c.ui.verbose, c.ui.debug); err != nil {
				return abortf("%v", err)
			}
		case tmplSpec == "phases" && !(c.ui.quiet && !c.ui.debug):
			if text, err = hgfmt.AppendChangesetPhases(nil, r, rev, logLevel(c.ui)); err != nil {
				return abortf("%v", err)
			}
		case c.ui.quiet && !c.ui.debug:
			text = fmt.Appendf(nil, "%d:%s\n", rev, r.Node(rev).Short())
		default:
			if text, err = hgfmt.AppendChangeset(nil, r, rev, logLevel(c.ui)); err != nil {
				return abortf("%v", err)
			}
		}
		// changesetprinter returns before the patch with -q.
		if (patch || stat) && (tmpl != nil || tmplSpec == "compact" || !(c.ui.quiet && !c.ui.debug)) {
			if text, err = appendLogPatch(text, c.ui, r, rev, diffMatch, patch, stat); err != nil {
				return abortf("%v", err)
			}
		}
		if g != nil {
			cs, err := r.Changeset(rev)
			if err != nil {
				return abortf("%v", err)
			}
			text = g.Append(b[:0], rev, hgfmt.Symbol(r, rev, cs), text)
			b = text
		}
		if _, err := c.ui.out.Write(text); err != nil {
			return err
		}
	}
	return nil
}

// plainGraph is ui.plain("graph"): HGPLAIN or HGPLAINEXCEPT set, and
// "graph" not among HGPLAINEXCEPT's exceptions.
func plainGraph() bool {
	_, plain := os.LookupEnv("HGPLAIN")
	except, hasExcept := os.LookupEnv("HGPLAINEXCEPT")
	if !plain && !hasExcept {
		return false
	}
	for _, e := range strings.Split(strings.TrimSpace(except), ",") {
		if e == "graph" {
			return false
		}
	}
	return true
}

func logLevel(u *ui) hgfmt.Level {
	switch {
	case u.debug:
		return hgfmt.Debug
	case u.verbose:
		return hgfmt.Verbose
	}
	return hgfmt.Normal
}

func branchExists(r *repo.Repo, name string) bool {
	bs, err := r.Branches()
	if err != nil {
		return false
	}
	for _, b := range bs {
		if b.Name == name {
			return true
		}
	}
	return false
}

// quoteRevset is revsetlang._quote.
func quoteRevset(s string) string {
	return "'" + hgfmt.StringEscape(s) + "'"
}

// filterFiles keeps the revisions that touch the FILE arguments, as
// hg log FILE without --follow: where every argument is a plain path
// with a filelog, the revisions its filelog links to (the filelog()
// revset); otherwise those whose changeset lists a matching path.
func filterFiles(r *repo.Repo, revs []int, args []string, cwd string, match func(string) bool, slow bool) ([]int, error) {
	linked := map[int]bool{}
	fast := !slow
	for _, a := range args {
		if strings.Contains(a, ":") {
			fast = false
			break
		}
		fl, err := r.File(path.Join(cwd, a))
		if err != nil {
			fast = false
			break
		}
		for i := 0; i < fl.Len(); i++ {
			linked[fl.LinkRev(i)] = true
		}
		fl.Close()
	}
	if fast {
		var out []int
		for _, rev := range revs {
			if linked[rev] {
				out = append(out, rev)
			}
		}
		return out, nil
	}
	var out []int
	for _, rev := range revs {
		cs, err := r.Changeset(rev)
		if err != nil {
			return nil, err
		}
		for _, f := range cs.Files {
			if match(f) {
				out = append(out, rev)
				break
			}
		}
	}
	return out, nil
}

// appendLogPatch is changesetprinter._showpatch: the diffstat, a blank
// line when both are shown, the diff, and a blank line.
func appendLogPatch(b []byte, u *ui, r *repo.Repo, rev int, match func(string) bool, patch, stat bool) ([]byte, error) {
	files, err := hgfmt.ChangesetDiff(r, rev, match, u.debug, 3)
	if err != nil {
		return nil, err
	}
	if stat {
		width := 80
		if !plainMode("") {
			width = termWidth(u)
		}
		b = hgfmt.AppendDiffstat(b, files, width)
	}
	if stat && patch {
		b = append(b, '\n')
	}
	if patch {
		b = hgfmt.AppendDiff(b, files)
	}
	return append(b, '\n'), nil
}

// logMatcher is the matcher of hg log's FILE arguments (relpath
// patterns by default; all files when there are none) and -I/-X (glob
// patterns by default), as scmutil.match builds it.
func logMatcher(pats, incl, excl []string, cwd string) (func(string) bool, error) {
	match := func(string) bool { return true }
	if len(pats) > 0 {
		m, err := revset.PathMatcher(pats, cwd)
		if err != nil {
			return nil, err
		}
		match = m
	}
	in := func(string) bool { return true }
	if len(incl) > 0 {
		m, err := revset.IncludeMatcher(incl, cwd)
		if err != nil {
			return nil, err
		}
		in = m
	}
	ex := func(string) bool { return false }
	if len(excl) > 0 {
		m, err := revset.IncludeMatcher(excl, cwd)
		if err != nil {
			return nil, err
		}
		ex = m
	}
	return func(f string) bool { return match(f) && in(f) && !ex(f) }, nil
}

// ancestorsDesc is dagop.revancestors of revs (with followFirst, through
// first parents only), newest first.
func ancestorsDesc(r *repo.Repo, revs []int, followFirst bool) []int {
	seen := map[int]bool{}
	stack := append([]int(nil), revs...)
	for len(stack) > 0 {
		rev := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if rev < 0 || seen[rev] {
			continue
		}
		seen[rev] = true
		p1, p2 := r.Parents(rev)
		stack = append(stack, p1)
		if !followFirst {
			stack = append(stack, p2)
		}
	}
	out := make([]int, 0, len(seen))
	for rev := range seen {
		out = append(out, rev)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

// writeJSONItems prints formatter.jsonformatter's list of items.
func writeJSONItems(u *ui, items [][]byte) error {
	b := []byte("[")
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	_, err := u.out.Write(append(b, "\n]\n"...))
	return err
}

// writeLogJSON prints revs as hg's changesetformatter with the json
// formatter does (-T json).
func writeLogJSON(ctx context.Context, u *ui, r *repo.Repo, revs []int) error {
	items := make([][]byte, 0, len(revs))
	for _, rev := range revs {
		if err := ctx.Err(); err != nil {
			return err
		}
		item, err := templater.JSONChangeset(r, rev, u.quiet, u.verbose && !u.debug, u.debug)
		if err != nil {
			return abortf("%v", err)
		}
		items = append(items, item)
	}
	return writeJSONItems(u, items)
}

// parseFailure prints a template or revset parse error as hg does
// ("hg: parse error...", a hint) and exits 255; other errors abort.
func parseFailure(u *ui, err error) error {
	var pe *hgparse.ParseError
	if !errors.As(err, &pe) {
		return abortf("%v", err)
	}
	u.errorf("hgfs: parse error%s\n", strings.TrimPrefix(revset.ErrorLine(err), "hg: parse error"))
	if pe.Hint != "" {
		u.errorf("(%s)\n", pe.Hint)
	}
	return &exitError{code: 255}
}

func revsetFailure(u *ui, err error) error {
	var pe *hgparse.ParseError
	if errors.As(err, &pe) {
		return parseFailure(u, err)
	}
	var le *repo.LookupError
	if errors.As(err, &le) {
		return lookupAbort(err)
	}
	return abortf("%v", err)
}

// singleRev resolves a -r argument to one revision as scmutil.revsingle
// does: the last of the set it names.
func singleRev(r *repo.Repo, spec string) (int, error) {
	revs, err := r.LookupRange(spec)
	if err != nil {
		return 0, lookupAbort(err)
	}
	if len(revs) == 0 {
		return 0, abortf("empty revision set")
	}
	return revs[len(revs)-1], nil
}

// revManifest resolves -r (default ".") to one revision and reads its
// manifest, as cat and manifest do.
func revManifest(c *cmdContext, r *repo.Repo) (int, []revlog.ManifestEntry, error) {
	spec := c.opts.String("rev")
	if spec == "" {
		spec = "."
	}
	rev, err := singleRev(r, spec)
	if err != nil {
		return 0, nil, err
	}
	m, err := r.Manifest(rev)
	if err != nil {
		return 0, nil, abortf("%v", err)
	}
	return rev, m, nil
}
