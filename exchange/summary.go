package exchange

import (
	"fmt"
	"strings"
)

// summaryLine is a line of the summary: status, or a warning (stderr).
type summaryLine struct {
	text string
	warn bool
}

func line(format string, args ...any) summaryLine {
	return summaryLine{text: fmt.Sprintf(format, args...)}
}

// summary returns the lines scmutil.registersummarycallback prints after
// a pull or unbundle transaction closes: the changegroup counts, the new
// obsolescence markers and what they obsoleted, the new changesets with
// their phases, and pre-existing changesets published.
func (s *Session) summary() []summaryLine {
	var out []summaryLine
	if s.Changesets > 0 || s.Revisions > 0 || s.Files > 0 {
		h := ""
		if s.HeadsDelta != 0 {
			h = fmt.Sprintf(" (%+d heads)", s.HeadsDelta)
		}
		files := s.Files
		if s.summaryFilesAdded {
			files = s.FilesAdded
		}
		out = append(out, line("added %d changesets with %d changes to %d files%s\n",
			s.Changesets, s.Revisions, files, h))
	}
	// Only pull and unbundle transactions report the rest (scmutil's
	// txmatch over _reportnewcssource and _reportobsoletedsource), but
	// new instabilities, which every transaction reports: a clone
	// bundle's ("bundleurl") prints the counts and those alone.
	report := strings.HasPrefix(s.desc, "pull") || strings.HasPrefix(s.desc, "unbundle")
	if !report && !s.opt.CreateMarkers {
		return out // no instability to report either: spare the phases
	}
	n := s.cl.Len()
	phase := s.phases.phaseOf(s.cl)
	if report {
		for _, l := range s.obsSummary(phase) {
			out = append(out, summaryLine{text: l})
		}
	}
	for _, l := range s.instabilityWarnings(phase) {
		out = append(out, summaryLine{text: l, warn: true})
	}
	if !report || n == s.origLen && !s.phases.dirty {
		return out
	}
	if n > s.origLen {
		// Over the visible new changesets: markers may hide some.
		hidden := s.hiddenRevs()
		var visible []int
		for r := s.origLen; r < n; r++ {
			if hidden == nil || !hidden[r] {
				visible = append(visible, r)
			}
		}
		if len(visible) > 0 {
			lo, hi := s.cl.Node(visible[0]).Short(), s.cl.Node(visible[len(visible)-1]).Short()
			rng := lo
			if len(visible) > 1 {
				rng = lo + ":" + hi
			}
			draft, secret := 0, 0
			for _, r := range visible {
				switch {
				case phase[r] == Draft:
					draft++
				case phase[r] >= Secret:
					secret++
				}
			}
			switch {
			case draft == 0 && secret == 0:
				out = append(out, line("new changesets %s\n", rng))
			case draft > 0 && secret > 0:
				out = append(out, line("new changesets %s (%d drafts, %d secrets)\n", rng, draft, secret))
			case draft > 0:
				out = append(out, line("new changesets %s (%d drafts)\n", rng, draft))
			default:
				out = append(out, line("new changesets %s (%d secrets)\n", rng, secret))
			}
		}
		if hidden != nil {
			extinct := 0
			for r := s.origLen; r < n; r++ {
				if hidden[r] && s.obsolete(r, phase) {
					extinct++
				}
			}
			if extinct > 0 {
				out = append(out, line("(%d other changesets obsolete on arrival)\n", extinct))
			}
		}
	}
	published := 0
	for r := 0; r < s.origLen && r < len(s.origPhase); r++ {
		if s.origPhase[r] != Public && phase[r] == Public {
			published++
		}
	}
	if published > 0 {
		out = append(out, line("%d local changesets published\n", published))
	}
	return out
}
