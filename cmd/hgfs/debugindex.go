package main

import (
	"context"
	"errors"

	"github.com/hgfs/hgfs/hgfmt"
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
		return nil, abortf("%v", err)
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
		ml, err := r.Manifestlog()
		return ml, false, err
	case file != "":
		fl, err := r.File(file)
		if err == nil && fl.Len() > 0 {
			return fl, true, nil
		}
		if err == nil {
			fl.Close()
		} else if !errors.Is(err, repo.ErrNoFile) {
			return nil, false, abortf("%v", err)
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
	return hgfmt.WriteIndex(c.ui.out, rl, c.ui.verbose, c.ui.debug)
}
