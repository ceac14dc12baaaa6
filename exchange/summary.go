package exchange

import "fmt"

// summary returns the lines scmutil.registersummarycallback prints after
// a pull or unbundle transaction closes: the changegroup counts, the new
// changesets with their phases, and pre-existing changesets published.
func (s *Session) summary() []string {
	var out []string
	if s.Changesets > 0 || s.Revisions > 0 || s.Files > 0 {
		h := ""
		if s.HeadsDelta != 0 {
			h = fmt.Sprintf(" (%+d heads)", s.HeadsDelta)
		}
		out = append(out, fmt.Sprintf("added %d changesets with %d changes to %d files%s\n",
			s.Changesets, s.Revisions, s.Files, h))
	}
	n := s.cl.Len()
	if n == s.origLen && !s.phases.dirty {
		return out
	}
	phase := s.phases.phaseOf(s.cl)
	if n > s.origLen {
		lo, hi := s.cl.Node(s.origLen).Short(), s.cl.Node(n-1).Short()
		rng := lo
		if n-1 > s.origLen {
			rng = lo + ":" + hi
		}
		draft, secret := 0, 0
		for r := s.origLen; r < n; r++ {
			switch {
			case phase[r] == Draft:
				draft++
			case phase[r] >= Secret:
				secret++
			}
		}
		switch {
		case draft == 0 && secret == 0:
			out = append(out, fmt.Sprintf("new changesets %s\n", rng))
		case draft > 0 && secret > 0:
			out = append(out, fmt.Sprintf("new changesets %s (%d drafts, %d secrets)\n", rng, draft, secret))
		case draft > 0:
			out = append(out, fmt.Sprintf("new changesets %s (%d drafts)\n", rng, draft))
		default:
			out = append(out, fmt.Sprintf("new changesets %s (%d secrets)\n", rng, secret))
		}
	}
	published := 0
	for r := 0; r < s.origLen && r < len(s.origPhase); r++ {
		if s.origPhase[r] != Public && phase[r] == Public {
			published++
		}
	}
	if published > 0 {
		out = append(out, fmt.Sprintf("%d local changesets published\n", published))
	}
	return out
}
