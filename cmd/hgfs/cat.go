package main

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/templater"
)

func init() {
	register(&command{
		name:     "cat",
		synopsis: "[-r REV] FILE...",
		help: `output the current or given revision of files

Prints each file as of the revision (default: the working directory's
parent). FILE is relative to the working directory; a directory prints
every file under it. Exits 1 if no file was printed.`,
		options: []option{
			{'r', "rev", optString, "", "print the given revision"},
			{'T', "template", optString, "", "display with template (json)"},
		},
		run: runCat,
	})
}

func runCat(ctx context.Context, c *cmdContext, args []string) error {
	if len(args) == 0 {
		return &usageError{"invalid arguments"}
	}
	r, err := c.openRepo()
	if err != nil {
		return err
	}
	defer r.Close()
	tmpl := c.opts.String("template")
	if tmpl != "" && tmpl != "json" {
		return abortf("hgfs cat: -T %s is not supported by hgfs (only -T json)", tmpl)
	}
	rev, m, err := revManifest(c, r)
	if err != nil {
		return err
	}
	selected := map[string]bool{}
	var missing []string
	for _, arg := range args {
		rel, err := filepath.Rel(r.Root, c.abs(arg))
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return abortf("%s not under root '%s'", arg, r.Root)
		}
		rel = filepath.ToSlash(rel)
		found := false
		for _, e := range m {
			if rel == "." || e.Path == rel || strings.HasPrefix(e.Path, rel+"/") {
				selected[e.Path] = true
				found = true
			}
		}
		if !found {
			missing = append(missing, arg)
		}
	}
	for _, arg := range missing {
		ui, err := filepath.Rel(c.cwd, c.abs(arg))
		if err != nil {
			ui = arg
		}
		c.ui.warn("%s: no such file in rev %s\n", filepath.ToSlash(ui), r.Node(rev).Short())
	}
	if len(selected) == 0 {
		if tmpl == "json" {
			if err := writeJSONItems(c.ui, nil); err != nil {
				return err
			}
		}
		return errNothing
	}
	// hg walks the manifest in order, printing each match once.
	var items [][]byte
	for _, e := range m {
		if !selected[e.Path] {
			continue
		}
		data, err := r.FileData(e)
		if err != nil {
			return abortf("%v", err)
		}
		if tmpl == "json" {
			items = append(items, templater.JSONItem(map[string]string{
				"data": templater.JSON(string(data), false), "path": templater.JSON(e.Path, false),
			}))
			continue
		}
		c.ui.out.Write(data)
	}
	if tmpl == "json" {
		return writeJSONItems(c.ui, items)
	}
	return nil
}
