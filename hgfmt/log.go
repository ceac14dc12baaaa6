package hgfmt

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// Level is how much `hg log` shows: its default template, -v or --debug.
type Level int

// Levels, from least to most output.
const (
	Normal  Level = iota // changeset, branch, bookmarks, tags, parents, user, date, summary
	Verbose              // files and the whole description instead of the summary
	Debug                // full nodes, phase, both parents, manifest, files+/files-, extras
)

// AppendChangeset appends rev as mercurial/templates/map-cmdline.default's
// changeset, changeset_verbose or changeset_debug template prints it,
// with the blank line that ends it.
func AppendChangeset(b []byte, r *repo.Repo, rev int, level Level) ([]byte, error) {
	return appendChangeset(b, r, rev, level, false)
}

// AppendChangesetPhases is AppendChangeset in hg's phases style
// (map-cmdline.phases): the phase line at every level.
func AppendChangesetPhases(b []byte, r *repo.Repo, rev int, level Level) ([]byte, error) {
	return appendChangeset(b, r, rev, level, true)
}

func appendChangeset(b []byte, r *repo.Repo, rev int, level Level, phase bool) ([]byte, error) {
	cs, err := r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	debug, verbose := level >= Debug, level >= Verbose
	node := r.Node(rev)
	if debug {
		b = fmt.Appendf(b, "changeset:   %d:%s\n", rev, node)
	} else {
		b = fmt.Appendf(b, "changeset:   %d:%s\n", rev, node.Short())
	}
	if br := cs.Branch(); br != "default" {
		b = fmt.Appendf(b, "branch:      %s\n", br)
	}
	if rev >= 0 {
		for _, bm := range r.NodeBookmarks(node) {
			b = fmt.Appendf(b, "bookmark:    %s\n", bm)
		}
		tags, err := r.NodeTags(node)
		if err != nil {
			return nil, err
		}
		for _, t := range tags {
			b = fmt.Appendf(b, "tag:         %s\n", t)
		}
	}
	if debug || phase {
		b = fmt.Appendf(b, "phase:       %s\n", r.Phase(rev))
	}
	// Parents are shown unless the only one is the previous revision.
	p1, p2 := r.Parents(rev)
	var shown []int
	switch {
	case p2 != revlog.NullRev:
		shown = []int{p1, p2}
	case debug:
		shown = []int{p1, revlog.NullRev}
	case p1 < rev-1:
		shown = []int{p1}
	}
	for _, p := range shown {
		if debug {
			b = fmt.Appendf(b, "parent:      %d:%s\n", p, r.Node(p))
		} else {
			b = fmt.Appendf(b, "parent:      %d:%s\n", p, r.Node(p).Short())
		}
	}
	if debug {
		mrev, err := r.ManifestRev(cs)
		if err != nil {
			return nil, err
		}
		b = fmt.Appendf(b, "manifest:    %d:%s\n", mrev, cs.Manifest)
	}
	b = fmt.Appendf(b, "user:        %s\n", cs.User)
	b = fmt.Appendf(b, "date:        %s\n", Date(cs.Time, cs.TZ))
	desc := strings.Trim(cs.Description, " \t\n\r\v\f")
	switch {
	case debug:
		mods, adds, dels, err := FileStatus(r, rev, cs.Files)
		if err != nil {
			return nil, err
		}
		for _, l := range []struct {
			label string
			files []string
		}{{"files:       ", mods}, {"files+:      ", adds}, {"files-:      ", dels}} {
			if len(l.files) > 0 {
				b = fmt.Appendf(b, "%s%s\n", l.label, strings.Join(l.files, " "))
			}
		}
		for _, kv := range Extras(cs, rev) {
			b = fmt.Appendf(b, "extra:       %s=%s\n", kv[0], StringEscape(kv[1]))
		}
	case verbose && len(cs.Files) > 0:
		b = fmt.Appendf(b, "files:       %s\n", strings.Join(cs.Files, " "))
	}
	if verbose {
		if desc != "" {
			b = fmt.Appendf(b, "description:\n%s\n\n", desc)
		}
	} else if desc != "" {
		b = fmt.Appendf(b, "summary:     %s\n", FirstLine(cs.Description))
	}
	return append(b, '\n'), nil
}

// Extras is ctx.extra() sorted by key: the changeset's extras with
// "branch" ("default" where the changeset names none; not for the null
// revision).
func Extras(cs *revlog.Changeset, rev int) [][2]string {
	keys := make([]string, 0, len(cs.Extra)+1)
	for k := range cs.Extra {
		keys = append(keys, k)
	}
	if _, ok := cs.Extra["branch"]; !ok && rev >= 0 {
		keys = append(keys, "branch")
	}
	sort.Strings(keys)
	out := make([][2]string, len(keys))
	for i, k := range keys {
		v, ok := cs.Extra[k]
		if !ok {
			v = "default"
		}
		out[i] = [2]string{k, v}
	}
	return out
}

// Date formats a changeset date as mercurial/utils/dateutil.py datestr's
// default "%a %b %d %H:%M:%S %Y %1%2"; tz is seconds west of UTC.
func Date(t int64, tz int) string {
	sign := byte('+')
	if tz > 0 {
		sign = '-'
	}
	minutes := tz / 60
	if minutes < 0 {
		minutes = -minutes
	}
	d := min(max(t-int64(tz), -0x80000000), 0x7FFFFFFF)
	return time.Unix(d, 0).UTC().Format("Mon Jan 02 15:04:05 2006") + fmt.Sprintf(" %c%02d%02d", sign, minutes/60, minutes%60)
}

// FirstLine is hg's firstline filter: the first line as bytes.splitlines
// splits (\n, \r, \r\n).
func FirstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// StringEscape is hg's stringescape filter (Python's escape_encode).
func StringEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\'':
			b.WriteString(`\'`)
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

// FileStatus splits the changeset's files as ctx.filesmodified,
// filesadded and filesremoved do (mercurial/metadata.py): added ones are in
// no parent's manifest, removed ones are not in the changeset's manifest.
func FileStatus(r *repo.Repo, rev int, files []string) (mods, adds, dels []string, err error) {
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
