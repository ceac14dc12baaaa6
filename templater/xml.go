package templater

import (
	"fmt"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// XMLHeader and XMLFooter are map-cmdline.xml's docheader and docfooter.
const (
	XMLHeader = "<?xml version=\"1.0\"?>\n<log>\n"
	XMLFooter = "</log>\n"
)

func xmlEscape(s string) string {
	v, _ := (&scope{}).filter("xmlescape", s)
	return v.(string)
}

// XMLChangeset is rev as hg's xml style (mercurial/templates/
// map-cmdline.xml) prints it: changeset, changeset_verbose (paths and
// copies) or changeset_debug (and extras).
func XMLChangeset(b []byte, r *repo.Repo, rev int, verbose, debug bool) ([]byte, error) {
	cs, err := r.Changeset(rev)
	if err != nil {
		return nil, err
	}
	node := r.Node(rev)
	b = fmt.Appendf(b, "<logentry revision=\"%d\" node=\"%s\">\n", rev, node)
	if br := cs.Branch(); br != "default" {
		b = fmt.Appendf(b, "<branch>%s</branch>\n", xmlEscape(br))
	}
	for _, bm := range r.NodeBookmarks(node) {
		b = fmt.Appendf(b, "<bookmark>%s</bookmark>\n", xmlEscape(bm))
	}
	tags, err := r.NodeTags(node)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		b = fmt.Appendf(b, "<tag>%s</tag>\n", xmlEscape(t))
	}
	// scmutil.meaningfulparents, as the parents keyword lists them.
	p1, p2 := r.Parents(rev)
	var ps []int
	switch {
	case debug:
		ps = []int{p1, p2}
	case p2 != revlog.NullRev:
		ps = []int{p1, p2}
	case p1 < rev-1:
		ps = []int{p1}
	}
	for _, p := range ps {
		b = fmt.Appendf(b, "<parent revision=\"%d\" node=\"%s\" />\n", p, r.Node(p))
	}
	b = fmt.Appendf(b, "<author email=\"%s\">%s</author>\n", xmlEscape(email(cs.User)), xmlEscape(person(cs.User)))
	b = fmt.Appendf(b, "<date>%s</date>\n", dateStr(date{cs.Time, cs.TZ}, "2006-01-02T15:04:05", true, true))
	b = fmt.Appendf(b, "<msg xml:space=\"preserve\">%s</msg>\n", xmlEscape(cs.Description))
	if verbose || debug {
		mods, adds, dels, err := hgfmt.FileStatus(r, rev, cs.Files)
		if err != nil {
			return nil, err
		}
		b = append(b, "<paths>\n"...)
		for _, l := range []struct {
			action string
			files  []string
		}{{"A", adds}, {"R", dels}, {"M", mods}} {
			for _, f := range l.files {
				b = fmt.Appendf(b, "<path action=\"%s\">%s</path>\n", l.action, xmlEscape(f))
			}
		}
		b = append(b, "</paths>\n"...)
		copies, err := fileCopies(r, rev, cs)
		if err != nil {
			return nil, err
		}
		if len(copies) > 0 {
			b = append(b, "<copies>\n"...)
			for _, c := range copies {
				b = fmt.Appendf(b, "<copy source=\"%s\">%s</copy>\n", xmlEscape(c[1]), xmlEscape(c[0]))
			}
			b = append(b, "</copies>\n"...)
		}
		if debug {
			for _, e := range hgfmt.Extras(cs, rev) {
				b = fmt.Appendf(b, "<extra key=\"%s\">%s</extra>\n", xmlEscape(e[0]), xmlEscape(e[1]))
			}
		}
	}
	return append(b, "</logentry>\n"...), nil
}

// fileCopies is the filelog-based copy tracing of scmutil.getcopiesfn:
// for each file of the changeset, its (name, source) when the file
// revision it has records a copy and has no first parent
// (filelog.renamed).
func fileCopies(r *repo.Repo, rev int, cs *revlog.Changeset) ([][2]string, error) {
	if len(cs.Files) == 0 {
		return nil, nil
	}
	m, err := r.Manifest(rev)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, f := range cs.Files {
		e, ok := repo.FindEntry(m, f)
		if !ok {
			continue
		}
		fl, err := r.File(f)
		if err != nil {
			return nil, err
		}
		frev, ok := fl.Rev(e.Node)
		if !ok || fl.Entry(frev).P1 != revlog.NullRev {
			fl.Close()
			continue
		}
		text, err := fl.Revision(frev)
		fl.Close()
		if err != nil {
			return nil, err
		}
		meta, _, err := revlog.ParseFileMeta(text)
		if err != nil {
			return nil, err
		}
		if src, ok := meta["copy"]; ok {
			out = append(out, [2]string{f, src})
		}
	}
	return out, nil
}
