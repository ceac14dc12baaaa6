package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

func init() {
	register(&command{
		name:     "log",
		aliases:  []string{"history"},
		synopsis: "[-r REV]... [-l NUM]",
		help: `show revision history of the repository

Prints changesets newest first in hg's default template (with -v the
files and full description, with --debug every field). -r selects
revisions: numbers, nodes or unique prefixes, tip, null, ., tags,
bookmarks, branch names, and ranges A:B. Hidden (obsolete) changesets
are not shown.`,
		options: []option{
			{'r', "rev", optList, "", "show the specified revision or revset"},
			{'l', "limit", optInt, "", "limit number of changes displayed"},
		},
		run: runLog,
	})
}

func runLog(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) > 0 {
		return abortf("hgfs log does not support file arguments")
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	var revs []int
	if specs := c.opts.List("rev"); len(specs) > 0 {
		seen := map[int]bool{}
		for _, spec := range specs {
			rs, err := r.LookupRange(spec)
			if err != nil {
				return lookupAbort(err)
			}
			for _, rev := range rs {
				if !seen[rev] {
					seen[rev] = true
					revs = append(revs, rev)
				}
			}
		}
	} else {
		vis, err := r.Visible()
		if err != nil {
			return abortf("%v", err).wrap(err)
		}
		for i := len(vis) - 1; i >= 0; i-- {
			revs = append(revs, vis[i])
		}
	}
	if c.opts.Changed("limit") {
		if n := c.opts.Int("limit"); n <= 0 {
			return abortf("limit must be positive")
		} else if n < len(revs) {
			revs = revs[:n]
		}
	}
	for _, rev := range revs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeChangeset(c.ui, r, rev); err != nil {
			return abortf("%v", err).wrap(err)
		}
	}
	return nil
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

// writeChangeset prints rev in mercurial/templates/map-cmdline.default's
// changeset, changeset_verbose or changeset_debug form.
func writeChangeset(u *ui, r *repo.Repo, rev int) error {
	cs, err := r.Changeset(rev)
	if err != nil {
		return err
	}
	node := r.Node(rev)
	var b strings.Builder
	if u.debug {
		fmt.Fprintf(&b, "changeset:   %d:%s\n", rev, node)
	} else {
		fmt.Fprintf(&b, "changeset:   %d:%s\n", rev, node.Short())
	}
	if br := cs.Branch(); br != "default" {
		fmt.Fprintf(&b, "branch:      %s\n", br)
	}
	if rev >= 0 {
		for _, bm := range r.NodeBookmarks(node) {
			fmt.Fprintf(&b, "bookmark:    %s\n", bm)
		}
		for _, t := range r.NodeTags(node) {
			fmt.Fprintf(&b, "tag:         %s\n", t)
		}
	}
	if u.debug {
		fmt.Fprintf(&b, "phase:       %s\n", r.Phase(rev))
	}
	p1, p2 := r.Parents(rev)
	var shown []int
	switch {
	case p2 != revlog.NullRev:
		shown = []int{p1, p2}
	case u.debug:
		shown = []int{p1, revlog.NullRev}
	case p1 < rev-1:
		shown = []int{p1}
	}
	for _, p := range shown {
		if u.debug {
			fmt.Fprintf(&b, "parent:      %d:%s\n", p, r.Node(p))
		} else {
			fmt.Fprintf(&b, "parent:      %d:%s\n", p, r.Node(p).Short())
		}
	}
	if u.debug {
		mrev, err := r.ManifestRev(cs)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "manifest:    %d:%s\n", mrev, cs.Manifest)
	}
	fmt.Fprintf(&b, "user:        %s\n", cs.User)
	fmt.Fprintf(&b, "date:        %s\n", hgDate(cs.Time, cs.TZ))
	desc := strings.Trim(cs.Description, " \t\n\r\v\f")
	switch {
	case u.debug:
		mods, adds, dels, err := fileStatus(r, rev, cs.Files)
		if err != nil {
			return err
		}
		for _, l := range []struct {
			label string
			files []string
		}{{"files:       ", mods}, {"files+:      ", adds}, {"files-:      ", dels}} {
			if len(l.files) > 0 {
				fmt.Fprintf(&b, "%s%s\n", l.label, strings.Join(l.files, " "))
			}
		}
		keys := make([]string, 0, len(cs.Extra))
		for k := range cs.Extra {
			keys = append(keys, k)
		}
		if _, ok := cs.Extra["branch"]; !ok && rev >= 0 {
			keys = append(keys, "branch")
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, ok := cs.Extra[k]
			if !ok {
				v = "default"
			}
			fmt.Fprintf(&b, "extra:       %s=%s\n", k, stringEscape(v))
		}
	case u.verbose && len(cs.Files) > 0:
		fmt.Fprintf(&b, "files:       %s\n", strings.Join(cs.Files, " "))
	}
	if u.verbose {
		if desc != "" {
			fmt.Fprintf(&b, "description:\n%s\n\n", desc)
		}
	} else if desc != "" {
		fmt.Fprintf(&b, "summary:     %s\n", firstLine(cs.Description))
	}
	b.WriteString("\n")
	u.write("%s", b.String())
	return nil
}

// hgDate formats a changeset date as mercurial/utils/dateutil.py datestr's
// default "%a %b %d %H:%M:%S %Y %1%2"; tz is seconds west of UTC.
func hgDate(t int64, tz int) string {
	sign := byte('+')
	if tz > 0 {
		sign = '-'
	}
	minutes := tz / 60
	if minutes < 0 {
		minutes = -minutes
	}
	d := t - int64(tz)
	d = min(max(d, -0x80000000), 0x7FFFFFFF)
	return time.Unix(d, 0).UTC().Format("Mon Jan 02 15:04:05 2006") + fmt.Sprintf(" %c%02d%02d", sign, minutes/60, minutes%60)
}

// firstLine is hg's firstline filter: the first line as bytes.splitlines
// splits (\n, \r, \r\n).
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// stringEscape is hg's stringescape filter (Python's escape_encode).
func stringEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// fileStatus splits the changeset's files as ctx.filesmodified,
// filesadded and filesremoved do (mercurial/metadata.py): added ones are in
// no parent's manifest, removed ones are not in the changeset's manifest.
func fileStatus(r *repo.Repo, rev int, files []string) (mods, adds, dels []string, err error) {
	if len(files) == 0 {
		return nil, nil, nil, nil
	}
	cur, err := r.Manifest(rev)
	if err != nil {
		return nil, nil, nil, err
	}
	p1, p2 := r.Parents(rev)
	m1, err := r.Manifest(p1)
	if err != nil {
		return nil, nil, nil, err
	}
	m2, err := r.Manifest(p2)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, f := range files {
		_, in1 := repo.FindEntry(m1, f)
		_, in2 := repo.FindEntry(m2, f)
		_, inCur := repo.FindEntry(cur, f)
		switch {
		case !in1 && !in2:
			adds = append(adds, f)
		case !inCur:
			dels = append(dels, f)
		default:
			mods = append(mods, f)
		}
	}
	return mods, adds, dels, nil
}
