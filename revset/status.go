package revset

import (
	"path"
	"regexp"
	"strings"

	"github.com/hgfs/hgfs/internal/hgparse"
	"github.com/hgfs/hgfs/revlog"
)

// statusPred is revset.checkstatus: adds(), modifies() and removes()
// keep the changesets whose status against their first parent has a
// file matching the pattern (glob by default) in the field. A path: or
// relpath: pattern names one file exactly (hg's matcher is then a
// prefix matcher with one file, which checkstatus compares by name).
func statusPred(field string) predicate {
	return func(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
		pat, err := getString(x, field+" requires a pattern")
		if err != nil {
			return nil, err
		}
		m, err := FileMatcher([]string{pat}, ev.opts.Cwd)
		if err != nil {
			return nil, err
		}
		exact := ""
		if kind, p, ok := strings.Cut(pat, ":"); ok && (kind == "path" || kind == "relpath") {
			if kind == "relpath" {
				p = path.Join(ev.opts.Cwd, p)
			}
			exact = path.Clean(p)
			if exact == "." {
				exact = ""
			}
			m = func(f string) bool { return f == exact }
		}
		return subset.filterErr(func(r int) (bool, error) {
			c, err := ev.changeset(r)
			if err != nil {
				return false, err
			}
			touched := false
			for _, f := range c.Files {
				if m(f) {
					touched = true
					break
				}
			}
			if !touched {
				return false, nil
			}
			return ev.statusHas(r, field, m)
		})
	}
}

// statusHas says whether repo.status(p1, r)'s field (adds: added,
// modifies: modified, removes: removed) holds a file match accepts.
func (ev *Evaluator) statusHas(r int, field string, match func(string) bool) (bool, error) {
	cur, err := ev.r.Manifest(r)
	if err != nil {
		return false, err
	}
	p1, _ := ev.r.Parents(r)
	var old []revlog.ManifestEntry
	if p1 >= 0 {
		if old, err = ev.r.Manifest(p1); err != nil {
			return false, err
		}
	}
	// Both manifests are sorted by path.
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j >= len(cur) || (i < len(old) && old[i].Path < cur[j].Path):
			if field == "removes" && match(old[i].Path) {
				return true, nil
			}
			i++
		case i >= len(old) || cur[j].Path < old[i].Path:
			if field == "adds" && match(cur[j].Path) {
				return true, nil
			}
			j++
		default:
			if field == "modifies" && (old[i].Node != cur[j].Node || old[i].Flags != cur[j].Flags) && match(cur[j].Path) {
				return true, nil
			}
			i++
			j++
		}
	}
	return false, nil
}

// fGrep is revset.grep: a regular expression searched in the files,
// user and description.
func fGrep(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	s, err := getString(x, "grep requires a string")
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, hgparse.Errorf("invalid match pattern: %v", err)
	}
	return ev.matchField(subset, func(c *revlog.Changeset) []string {
		return append(append([]string(nil), c.Files...), c.User, c.Description)
	}, re.MatchString)
}

// fFollow is revset.follow without arguments: the ancestors of the
// working directory's parent. A file argument (following its history
// through copies) is refused.
func fFollow(ev *Evaluator, subset *set, x *hgparse.Node, _ order) (*set, error) {
	if x != nil {
		return nil, &UnsupportedError{"follow() with arguments"}
	}
	p, err := ev.r.Lookup(".")
	if err != nil {
		return nil, err
	}
	if p < 0 {
		// dagop.revancestors of the null revision is itself.
		return subset.and(memberSet(map[int]bool{p: true})), nil
	}
	return subset.and(memberSet(ev.ancestors([]int{p}, -1))), nil
}
