package main

import (
	"context"
	"strconv"

	"github.com/hgfs/hgfs/revlog"
)

func init() {
	register(&command{
		name:     "debugdata",
		synopsis: "-c|-m|FILE REV",
		help: `dump the contents of a data file revision

REV is a revision of the revlog itself (a number, counting back from
the end when negative, a node or a unique node prefix), not a
changeset. The raw text is printed as stored, including any file
metadata header.`,
		options: revlogOptions,
		run:     runDebugdata,
	})
}

func runDebugdata(ctx context.Context, c *cmdContext, args []string) error {
	file, rev := "", ""
	switch {
	case c.opts.Bool("changelog") || c.opts.Bool("manifest"):
		if len(args) != 1 {
			return &usageError{"invalid arguments"}
		}
		rev = args[0]
	case len(args) == 2:
		file, rev = args[0], args[1]
	default:
		return &usageError{"invalid arguments"}
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	rl, closeIt, err := openStorage(c, r, file)
	if err != nil {
		return err
	}
	if closeIt {
		defer rl.Close()
	}
	var n int
	var ok bool
	if file != "" {
		n, ok = fileLookup(rl, rev)
	} else {
		n, ok = revlogLookup(rl, rev)
	}
	if !ok {
		return abortf("invalid revision identifier %s", rev)
	}
	if n == revlog.NullRev {
		return nil // the null revision's text is empty
	}
	text, err := rl.Revision(n)
	if err != nil {
		return abortf("%v", err)
	}
	c.ui.out.Write(text)
	return nil
}

// revlogLookup resolves id within one revlog as mercurial/revlog.py lookup
// does: a rev number (negative counts from the end), a full hex node, or
// a unique hex prefix.
func revlogLookup(rl *revlog.Revlog, id string) (int, bool) {
	if v, err := strconv.Atoi(id); err == nil && strconv.Itoa(v) == id {
		if v < 0 {
			v += rl.Len()
		}
		if v >= 0 && v < rl.Len() {
			return v, true
		}
		// Out of range: hg goes on to try it as a node prefix.
	}
	if len(id) == 40 {
		if node, err := revlog.ParseNode(id); err == nil {
			if rev, ok := rl.Rev(node); ok {
				return rev, true
			}
		}
	}
	rev, err := rl.LookupPrefix(id)
	if err != nil {
		return 0, false
	}
	return rev, true
}

// fileLookup resolves id within a filelog as
// mercurial/utils/storageutil.py fileidlookup does: a rev number (-1 is
// the null revision; other negative numbers are not counted from the end)
// or a full hex node — no prefixes.
func fileLookup(rl *revlog.Revlog, id string) (int, bool) {
	if v, err := strconv.Atoi(id); err == nil && strconv.Itoa(v) == id {
		if v >= revlog.NullRev && v < rl.Len() {
			return v, true
		}
		return 0, false
	}
	if len(id) == 40 {
		if node, err := revlog.ParseNode(id); err == nil {
			if node == revlog.NullNode {
				return revlog.NullRev, true
			}
			if rev, ok := rl.Rev(node); ok {
				return rev, true
			}
		}
	}
	return 0, false
}
