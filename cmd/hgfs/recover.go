package main

import (
	"context"

	"github.com/hgfs/hgfs/txn"
)

func init() {
	register(&command{
		name:     "recover",
		synopsis: "[--verify]",
		help: `roll back an interrupted transaction

    Recover from an interrupted unbundle or pull (hgfs's or hg's): every
    revlog the transaction appended to is cut back to its size before it,
    files it created are removed and files it rewrote (fncache, phaseroots,
    bookmarks) are restored, as 'hg recover' does. The journal hgfs writes
    is hg's, so 'hg recover' can do the same for an interrupted hgfs
    transaction and 'hgfs recover' for an interrupted hg one.

    The journal is checked before anything changes: names outside the
    repository, truncations that would grow a file, or an unreadable line
    stop the recovery with an error and the journal kept.

    Returns 0 if successful, 1 if nothing to recover or verify fails.`,
		options: []option{
			{0, "verify", optBool, "", "run `hgfs verify` after successful recover"},
		},
		run: runRecover,
	})
}

func runRecover(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) != 0 {
		return &usageError{msg: "invalid arguments"}
	}
	root, err := c.repoRoot()
	if err != nil {
		return err
	}
	ok, err := txn.RecoverContext(ctx, root, txn.RecoverOptions{
		Lock:   sessionOptions(c, root).Lock,
		Status: func(m string) { c.ui.status("%s", m) },
		Warn:   func(m string) { c.ui.warn("%s", m) },
	})
	if err != nil {
		return sessionError(err, root)
	}
	if !ok {
		return errNothing
	}
	if c.opts.Bool("verify") {
		return runVerify(ctx, c, nil)
	}
	c.ui.warn("(verify step skipped, run `hg verify` to check your repository content)\n")
	return nil
}
