package main

import (
	"context"
	"runtime"
	"runtime/debug"
)

// writeVersion is "hgfs version" and "hgfs --version", laid out as hg's:
// the version line alone with -q, then where the binary comes from.
func writeVersion(u *ui) {
	u.write("hgfs (version %s)\n", version())
	if u.quiet {
		return
	}
	u.write("(built with %s for %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if !u.verbose {
		return
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision", "vcs.time", "vcs.modified", "CGO_ENABLED", "-tags":
				u.write("%s=%s\n", s.Key, s.Value)
			}
		}
	}
}

func init() {
	register(&command{
		name:     "version",
		synopsis: "",
		help: `output version and build information

With -q, only the version line. With -v, also the source revision
the binary was built from, when Go recorded it.`,
		norepo: true,
		run: func(ctx context.Context, c *cmdContext, args []string) error {
			if len(args) > 0 {
				return &usageError{"invalid arguments"}
			}
			writeVersion(c.ui)
			return nil
		},
	})
}
