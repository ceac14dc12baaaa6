package profiling

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// funcCost is one function's share of a profile's last sample value
// (CPU nanoseconds, bytes in use, contention delay).
type funcCost struct {
	name, file string
	line       int64
	flat, cum  int64
}

// aggregate sums flat and cumulative cost per function. Recursion counts
// once in cum per sample.
func aggregate(p *pprofProfile) (funcs map[uint64]*funcCost, total int64, unit string) {
	vi := len(p.sampleTypes) - 1
	unit = p.sampleTypes[vi].typ + "/" + p.sampleTypes[vi].unit
	funcs = map[uint64]*funcCost{}
	for _, s := range p.samples {
		v := s.values[vi]
		total += v
		seen := map[uint64]bool{}
		p.lines(s, func(fn *pprofFunction, li, lj int) {
			fc := funcs[fn.id]
			if fc == nil {
				fc = &funcCost{name: fn.name, file: fn.filename, line: fn.startLine}
				funcs[fn.id] = fc
			}
			// The leaf is the first line of the first location.
			if li == 0 && lj == 0 {
				fc.flat += v
			}
			if !seen[fn.id] {
				seen[fn.id] = true
				fc.cum += v
			}
		})
	}
	return funcs, total, unit
}

// writeText prints the top functions by flat cost, as go tool pprof -top.
func writeText(w io.Writer, data []byte, top int) error {
	p, err := parsePprof(data)
	if err != nil {
		return fmt.Errorf("reading profile: %w", err)
	}
	funcs, total, unit := aggregate(p)
	list := make([]*funcCost, 0, len(funcs))
	for _, f := range funcs {
		list = append(list, f)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].flat != list[j].flat {
			return list[i].flat > list[j].flat
		}
		if list[i].cum != list[j].cum {
			return list[i].cum > list[j].cum
		}
		return list[i].name < list[j].name
	})
	if len(list) > top {
		list = list[:top]
	}
	pct := func(v int64) float64 {
		if total == 0 {
			return 0
		}
		return 100 * float64(v) / float64(total)
	}
	fmt.Fprintf(w, "profile: %d samples, total %s (%s)\n", len(p.samples), formatValue(total, unit), unit)
	fmt.Fprintf(w, "%12s %6s %6s %12s %6s  %s\n", "flat", "flat%", "sum%", "cum", "cum%", "function")
	var sum int64
	for _, f := range list {
		sum += f.flat
		fmt.Fprintf(w, "%12s %5.1f%% %5.1f%% %12s %5.1f%%  %s\n",
			formatValue(f.flat, unit), pct(f.flat), pct(sum), formatValue(f.cum, unit), pct(f.cum), f.name)
	}
	return nil
}

func formatValue(v int64, unit string) string {
	switch {
	case strings.HasSuffix(unit, "/nanoseconds"):
		return fmt.Sprintf("%.3fs", float64(v)/1e9)
	case strings.HasSuffix(unit, "/bytes"):
		return fmt.Sprintf("%.1fkB", float64(v)/1024)
	}
	return fmt.Sprint(v)
}

// writeCallgrind writes the profile in callgrind format: per function its
// self cost and, for each callee, a calls= line with the inclusive cost of
// those calls. See valgrind's docs/callgrind-format.
func writeCallgrind(w io.Writer, data []byte) error {
	p, err := parsePprof(data)
	if err != nil {
		return fmt.Errorf("reading profile: %w", err)
	}
	vi := len(p.sampleTypes) - 1
	type edge struct{ caller, callee uint64 }
	self := map[uint64]int64{}
	calls := map[edge]int64{}
	fns := map[uint64]*pprofFunction{}
	for _, s := range p.samples {
		v := s.values[vi]
		var stack []*pprofFunction // leaf first
		p.lines(s, func(fn *pprofFunction, _, _ int) {
			stack = append(stack, fn)
			fns[fn.id] = fn
		})
		if len(stack) == 0 {
			continue
		}
		self[stack[0].id] += v
		seen := map[edge]bool{}
		for i := 1; i < len(stack); i++ {
			e := edge{stack[i].id, stack[i-1].id}
			if !seen[e] {
				seen[e] = true
				calls[e] += v
			}
		}
	}
	ids := make([]uint64, 0, len(fns))
	for id := range fns {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	byCaller := map[uint64][]edge{}
	for e := range calls {
		byCaller[e.caller] = append(byCaller[e.caller], e)
	}
	bw := &errWriter{w: w}
	event := p.sampleTypes[vi].typ
	bw.printf("# callgrind format\nversion: 1\ncreator: hgfs\npositions: line\nevents: %s\n\n", event)
	for _, id := range ids {
		f := fns[id]
		bw.printf("fl=%s\nfn=%s\n%d %d\n", f.filename, f.name, f.startLine, self[id])
		es := byCaller[id]
		sort.Slice(es, func(i, j int) bool { return es[i].callee < es[j].callee })
		for _, e := range es {
			c := fns[e.callee]
			bw.printf("cfl=%s\ncfn=%s\ncalls=1 %d\n%d %d\n", c.filename, c.name, c.startLine, f.startLine, calls[e])
		}
		bw.printf("\n")
	}
	return bw.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
