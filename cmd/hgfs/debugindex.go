package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hgfs/hgfs/repo"
	"github.com/hgfs/hgfs/revlog"
)

// openRepo opens the repository the command works on.
func (c *cmdContext) openRepo() (*repo.Repo, error) {
	root, err := c.repoRoot()
	if err != nil {
		return nil, err
	}
	r, err := repo.Open(root)
	if err != nil {
		return nil, abortf("%v", err).wrap(err)
	}
	return r, nil
}

// wrap records the cause of an abort so errors.Is/As still see it.
func (e *abortError) wrap(err error) *abortError {
	e.err = err
	return e
}

// lookupAbort turns a repo lookup failure into hg's abort (with hint).
func lookupAbort(err error) error {
	var le *repo.LookupError
	if errors.As(err, &le) {
		a := abortf("%s", le.Error()).wrap(err)
		if h := le.Hint(); h != "" {
			a.hint = h
		}
		return a
	}
	return err
}

// inputError prints an hg InputError ("abort: msg") and exits 255, as hg
// 6.3 does without ui.detailed-exit-code.
func inputError(msg string) error { return abortf("%s", msg) }

// openStorage opens the revlog named by -c, -m or a tracked file, as
// mercurial/cmdutil.py openstorage does for the debug commands.
func openStorage(c *cmdContext, r *repo.Repo, file string) (rl *revlog.Revlog, closeIt bool, err error) {
	cl, mf := c.opts.Bool("changelog"), c.opts.Bool("manifest")
	switch {
	case cl && mf:
		return nil, false, inputError("cannot specify --changelog and --manifest at the same time")
	case (cl || mf) && file != "":
		return nil, false, inputError("cannot specify filename with --changelog or --manifest")
	case cl:
		return r.Changelog(), false, nil
	case mf:
		return r.Manifestlog(), false, nil
	case file != "":
		fl, err := r.File(file)
		if err == nil && fl.Len() > 0 {
			return fl, true, nil
		}
		if err == nil {
			fl.Close()
		} else if !errors.Is(err, repo.ErrNoFile) {
			return nil, false, abortf("%v", err).wrap(err)
		}
	}
	return nil, false, inputError("cannot give path to non-revlog")
}

var revlogOptions = []option{
	{'c', "changelog", optBool, "", "open changelog"},
	{'m', "manifest", optBool, "", "open manifest"},
}

func init() {
	register(&command{
		name:     "debugindex",
		synopsis: "-c|-m|FILE",
		help: `dump index data for a revlog

Prints one line per revision: its number, linkrev, node and parents'
nodes, as hg debugindex does. With -v (or --debug, which also prints
full nodes) adds rank, parent revs, full size, delta base, flags,
compression mode, data offset and chunk size.`,
		options: revlogOptions,
		run:     runDebugindex,
	})
}

func runDebugindex(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) > 1 {
		return &usageError{"invalid arguments"}
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	file := ""
	if len(args) == 1 {
		file = args[0]
	}
	rl, closeIt, err := openStorage(c, r, file)
	if err != nil {
		return err
	}
	if closeIt {
		defer rl.Close()
	}
	writeIndex(c.ui, rl)
	return nil
}

// indexColumn mirrors one column of mercurial/revlogutils/debug.py.
type indexColumn struct {
	name    string
	size    int // 0: node width
	verbose bool
	value   func(rl *revlog.Revlog, rev int, e revlog.Entry, hexfn func(revlog.Node) string) string
}

// indexColumns: keep in sync with mercurial/revlogutils/debug.py
// INDEX_ENTRY_DEBUG_COLUMN (revlog v1 values for rank, compression modes
// and sidedata).
var indexColumns = []indexColumn{
	{"rev", 6, false, func(_ *revlog.Revlog, rev int, _ revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(rev)
	}},
	{"rank", 6, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "-1" }},
	{"linkrev", 6, false, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.LinkRev)
	}},
	{"nodeid", 0, false, func(_ *revlog.Revlog, _ int, e revlog.Entry, h func(revlog.Node) string) string { return h(e.Node) }},
	{"p1-rev", 6, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.P1)
	}},
	{"p1-nodeid", 0, false, func(rl *revlog.Revlog, _ int, e revlog.Entry, h func(revlog.Node) string) string {
		return h(nodeOf(rl, e.P1))
	}},
	{"p2-rev", 6, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.P2)
	}},
	{"p2-nodeid", 0, false, func(rl *revlog.Revlog, _ int, e revlog.Entry, h func(revlog.Node) string) string {
		return h(nodeOf(rl, e.P2))
	}},
	{"full-size", 20, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.RawLen)
	}},
	{"delta-base", 6, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.BaseRev)
	}},
	{"flags", 2, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.Flags)
	}},
	{"comp-mode", 4, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "2" }},
	{"data-offset", 20, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.Offset)
	}},
	{"chunk-size", 10, true, func(_ *revlog.Revlog, _ int, e revlog.Entry, _ func(revlog.Node) string) string {
		return fmt.Sprint(e.CompressedLen)
	}},
	{"sd-comp-mode", 7, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "inline" }},
	{"sidedata-offset", 20, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "0" }},
	{"sd-chunk-size", 10, true, func(*revlog.Revlog, int, revlog.Entry, func(revlog.Node) string) string { return "0" }},
}

func nodeOf(rl *revlog.Revlog, rev int) revlog.Node {
	if rev < 0 || rev >= rl.Len() {
		return revlog.NullNode
	}
	return rl.Entry(rev).Node
}

func writeIndex(u *ui, rl *revlog.Revlog) {
	hexfn, idlen := revlog.Node.Short, 12
	if u.debug {
		hexfn, idlen = revlog.Node.String, 40
	}
	width := func(col indexColumn) int {
		if col.size == 0 {
			return idlen
		}
		return max(col.size, len(col.name))
	}
	var hdr []string
	for _, col := range indexColumns {
		if col.verbose && !u.verbose {
			continue
		}
		hdr = append(hdr, fmt.Sprintf("%*s", width(col), col.name))
	}
	u.write("%s\n", strings.Join(hdr, " "))
	var line []byte
	for rev := 0; rev < rl.Len(); rev++ {
		e := rl.Entry(rev)
		line = line[:0]
		first := true
		for _, col := range indexColumns {
			if col.verbose && !u.verbose {
				continue
			}
			if !first {
				line = append(line, ' ')
			}
			first = false
			line = fmt.Appendf(line, "%*s", width(col), col.value(rl, rev, e, hexfn))
		}
		line = append(line, '\n')
		u.out.Write(line)
	}
}
