package main

import (
	"context"
	"strings"

	"github.com/hgfs/hgfs/templater"
)

func init() {
	register(&command{
		name:     "manifest",
		synopsis: "[-r REV]",
		help: `output the current or given revision of the project manifest

Prints every tracked path of the revision (default: the working
directory's parent). With -v each path is preceded by its permissions
and a type character ("*" executable, "@" symlink); with --debug also by
its file node.`,
		options: []option{
			{'r', "rev", optString, "", "revision to display"},
			{'T', "template", optString, "", "display with template (json)"},
		},
		run: runManifest,
	})
}

func runManifest(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) > 0 {
		return &usageError{"invalid arguments"}
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	if t := c.opts.String("template"); t != "" && t != "json" {
		return abortf("hgfs manifest: -T %s is not supported by hgfs (only -T json)", t)
	}
	_, m, err := revManifest(c, r)
	if err != nil {
		return err
	}
	// Keep in sync with mercurial/commands.py manifest.
	char := map[string]string{"l": "@", "x": "*", "": " ", "t": "d"}
	mode := map[string]string{"l": "644", "x": "755", "": "644", "t": "755"}
	if c.opts.String("template") == "json" {
		// commands.manifest's formatter items: hash, mode, path, type.
		types := map[string]string{"l": "@", "x": "*", "": "", "t": "d"}
		var items [][]byte
		for _, e := range m {
			items = append(items, templater.JSONItem(map[string]string{
				"hash": templater.JSON(e.Node.String(), false), "mode": templater.JSON(mode[e.Flags], false),
				"path": templater.JSON(e.Path, false), "type": templater.JSON(types[e.Flags], false),
			}))
		}
		return writeJSONItems(c.ui, items)
	}
	var b strings.Builder
	for _, e := range m {
		b.Reset()
		if c.ui.debug {
			b.WriteString(e.Node.String())
			b.WriteByte(' ')
		}
		if c.ui.verbose {
			b.WriteString(mode[e.Flags] + " " + char[e.Flags] + " ")
		}
		b.WriteString(e.Path)
		b.WriteByte('\n')
		c.ui.out.WriteString(b.String())
	}
	return nil
}
