package templater

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// JSONChangeset is one item of `hg log -T json` (logcmdutil's
// changesetformatter through formatter.jsonformatter): "\n {\n" the
// fields sorted, "\n }". quiet keeps rev and node; verbose adds files;
// debug adds the manifest, extras and the file status lists.
func JSONChangeset(r *repo.Repo, rev int, quiet, verbose, debug bool) ([]byte, error) {
	fields := map[string]string{
		"rev":  fmt.Sprint(rev),
		"node": JSON(r.Node(rev).String(), false),
	}
	if !quiet {
		cs, err := r.Changeset(rev)
		if err != nil {
			return nil, err
		}
		p1, p2 := r.Parents(rev)
		parents := []string{r.Node(p1).String()}
		if p2 != revlog.NullRev {
			parents = append(parents, r.Node(p2).String())
		}
		fields["branch"] = JSON(cs.Branch(), false)
		fields["phase"] = JSON(phaseOf(r, rev), false)
		fields["user"] = JSON(cs.User, false)
		fields["date"] = fmt.Sprintf("[%d, %d]", cs.Time, cs.TZ)
		fields["desc"] = JSON(cs.Description, false)
		fields["bookmarks"] = jsonList(r.NodeBookmarks(r.Node(rev)))
		tags, err := r.NodeTags(r.Node(rev))
		if err != nil {
			return nil, err
		}
		fields["tags"] = jsonList(tags)
		fields["parents"] = jsonList(parents)
		if debug {
			fields["manifest"] = JSON(cs.Manifest.String(), false)
			var kv []string
			for _, e := range hgfmt.Extras(cs, rev) {
				kv = append(kv, JSON(e[0], false)+": "+JSON(e[1], false))
			}
			fields["extra"] = "{" + strings.Join(kv, ", ") + "}"
			mods, adds, dels, err := hgfmt.FileStatus(r, rev, cs.Files)
			if err != nil {
				return nil, err
			}
			fields["modified"], fields["added"], fields["removed"] = jsonList(mods), jsonList(adds), jsonList(dels)
		}
		if verbose {
			fields["files"] = jsonList(cs.Files)
		}
	}
	return JSONItem(fields), nil
}

// JSONItem is one item of formatter.jsonformatter: "\n {\n", the fields
// (values already JSON) sorted by name, "\n }". A list of items is "["
// the items joined by "," then "\n]\n".
func JSONItem(fields map[string]string) []byte {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte("\n {\n")
	for i, k := range keys {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = fmt.Appendf(b, "  \"%s\": %s", k, fields[k])
	}
	return append(b, "\n }"...)
}

func jsonList(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = JSON(s, false)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
