package templater

import (
	"fmt"
	"strings"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// CompactChangeset is rev as hg's compact style
// (mercurial/templates/map-cmdline.compact) prints it: changeset,
// changeset_verbose (for -v and --debug, which has no template of its
// own) or changeset_quiet.
func CompactChangeset(b []byte, r *repo.Repo, rev int, quiet, verbose, debug bool) ([]byte, error) {
	node := r.Node(rev)
	if quiet && !verbose && !debug {
		return fmt.Appendf(b, "%d:%s\n", rev, node.Short()), nil
	}
	cs, err := r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	b = fmt.Appendf(b, "%d", rev)
	t, err := r.NodeTags(node)
	if err != nil {
		return nil, err
	}
	if len(t) > 0 {
		b = fmt.Appendf(b, "[%s]", strings.Join(t, ","))
	}
	long := verbose || debug
	if bm := r.NodeBookmarks(node); len(bm) > 0 && !long {
		b = fmt.Appendf(b, "[%s]", strings.Join(bm, ","))
	}
	// The parents keyword: scmutil.meaningfulparents.
	p1, p2 := r.Parents(rev)
	var ps []string
	switch {
	case debug || p2 != revlog.NullRev:
		ps = []string{fmt.Sprint(p1), fmt.Sprint(p2)}
	case p1 < rev-1:
		ps = []string{fmt.Sprint(p1)}
	}
	if len(ps) > 0 {
		b = fmt.Appendf(b, ":%s", strings.Join(ps, ","))
	}
	d := dateStr(date{cs.Time, cs.TZ}, "2006-01-02 15:04 ", true, false)
	if long {
		desc := strings.Trim(cs.Description, " \t\n\r\v\f")
		return fmt.Appendf(b, "   %s   %s   %s\n  %s\n\n", node.Short(), d, cs.User, desc), nil
	}
	first := strings.Trim(hgfmt.FirstLine(cs.Description), " \t\n\r\v\f")
	return fmt.Appendf(b, "   %s   %s   %s\n  %s\n\n", node.Short(), d, shortUser(cs.User), first), nil
}
