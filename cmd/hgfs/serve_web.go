package main

// What hgfs serve answers with: one repository (a wireproto.Server, its
// page included), or with --web-conf FILE the repositories the file's
// [paths] names (a wireproto.WebDir), as hg serve --web-conf does
// (mercurial/hgweb/hgwebdir_mod.py).

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/wireproto"
)

// serveHandler makes the handler of hgfs serve. sc is the command's
// serving configuration with its logs.
func serveHandler(c *cmdContext, root string, sc wireproto.ServerConfig) (http.Handler, error) {
	if conf := c.opts.String("web-conf"); conf != "" {
		return webDirHandler(c, conf, sc)
	}
	sc.Web = webConfig(c.ui.cfg)
	srv, err := wireproto.NewServer(root, sc)
	if err != nil {
		return nil, abortf("%v", err)
	}
	return srv, nil
}

// webConfig reads the [web] settings a repository's page shows. hg reads
// them with untrusted=True: the repository's owner names and describes
// it, says who may read it (web.allow_read, web.deny_read) and, for a
// repository served alone, where it is reached (hgweb_mod's
// web.baseurl).
func webConfig(cfg *configSet) wireproto.WebConfig {
	u := cfg.Untrusted()
	return wireproto.WebConfig{
		Name:        u.Get(config.WebName),
		Description: u.Get(config.WebDescription),
		Contact:     u.Get(config.WebContact),
		BaseURL:     u.Get(config.WebBaseURL),
		ReadDenied: wireproto.ReadDenied(u.List(config.WebAllowRead.Section, config.WebAllowRead.Name),
			u.List(config.WebDenyRead.Section, config.WebDenyRead.Name)),
	}
}

// webDirHandler serves the repositories of the --web-conf file conf.
// Each is served with the global configuration, the file's (trusted,
// whoever owns it, as hg trusts it), its own .hg/hgrc and --config, in
// that order; web.baseurl and web.descend are the file's. A repository
// that cannot be opened is left out with a warning (hg warns when it
// lists it).
func webDirHandler(c *cmdContext, conf string, logs wireproto.ServerConfig) (http.Handler, error) {
	conf = c.abs(conf)
	base, err := config.Load(os.LookupEnv)
	if err != nil {
		return nil, abortf("%v", err)
	}
	base.Warn = c.ui.cfg.Warn
	if _, err := os.Stat(conf); err != nil {
		return nil, abortf("config file %s not found!", conf)
	}
	// hg reads the file's [paths] into a section of its own (hgweb-paths),
	// so those of the other hgrc files play no part.
	paths := config.New()
	for _, cfg := range []*configSet{base, paths} {
		if err := cfg.ReadTrustedFile(conf); err != nil {
			return nil, abortf("%v", err)
		}
	}
	copyOverrides(c, base)
	var repos []wireproto.WebDirRepo
	for _, e := range webConfPaths(c, paths) {
		cfg := base.Copy()
		if err := cfg.ReadFile(filepath.Join(e.root, ".hg", "hgrc")); err != nil {
			c.ui.warn("error reading %s/.hg/hgrc: %v\n", e.root, err)
			continue
		}
		copyOverrides(c, cfg)
		sc, err := serverConfig(cfg)
		if err != nil {
			return nil, err
		}
		sc.StoreWalkers, sc.AccessLog, sc.ErrorLog = logs.StoreWalkers, logs.AccessLog, logs.ErrorLog
		sc.Web = webConfig(cfg)
		sc.Web.BaseURL = "" // the WebDir's, with the name appended
		hidden, err := cfg.Untrusted().GetBool(config.WebHidden)
		if err != nil {
			return nil, abortf("%v", err)
		}
		srv, err := wireproto.NewServer(e.root, sc)
		if err != nil {
			c.ui.warn("error accessing repository at %s: %v\n", e.root, err)
			continue
		}
		repos = append(repos, wireproto.WebDirRepo{Name: e.name, Server: srv, Hidden: hidden})
	}
	descend, err := base.GetBool(config.WebDescend)
	if err != nil {
		return nil, abortf("%v", err)
	}
	return wireproto.NewWebDir(repos, wireproto.WebDirConfig{
		BaseURL: base.Get(config.WebBaseURL), Descend: descend, AccessLog: logs.AccessLog,
	}), nil
}

type webConfRepo struct{ name, root string }

// webConfPaths lists the repositories of a web-conf's [paths], as
// hgwebdir's findrepos: "NAME = PATH" serves PATH as NAME (PATH may be a
// list); "PREFIX = DIR/*" serves every repository found in DIR, not
// looking inside repositories, as PREFIX/ its path below DIR, and
// "DIR/**" looks inside them too (subrepositories). Relative paths are
// relative to the working directory, as in hg.
func webConfPaths(c *cmdContext, paths *configSet) []webConfRepo {
	var out []webConfRepo
	sec := config.PathsDefault.Section // each of its names is a repository's
	for _, name := range paths.Names(sec) {
		prefix := strings.Trim(filepath.ToSlash(name), "/")
		for _, p := range paths.List(sec, name) {
			tail := filepath.Base(p)
			if tail != "*" && tail != "**" {
				out = append(out, webConfRepo{prefix, c.abs(p)})
				continue
			}
			head := c.abs(filepath.Dir(p))
			for _, root := range walkRepos(head, tail == "**") {
				rel := strings.TrimLeft(filepath.ToSlash(strings.TrimPrefix(root, head)), "/")
				out = append(out, webConfRepo{strings.Trim(prefix+"/"+rel, "/"), root})
			}
		}
	}
	return out
}

// walkRepos finds the repositories at or below top as scmutil.walkrepos
// (followsym=True) does, in sorted order: a directory holding .hg is
// one (and so is its .hg/patches if that is a repository); recurse looks
// inside repositories too. Symbolic links to directories are followed,
// each directory walked once.
func walkRepos(top string, recurse bool) []string {
	var out []string
	seen := map[string]bool{}
	isDir := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	}
	var walk func(dir string)
	walk = func(dir string) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			return
		}
		seen[real] = true
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		repo := isDir(filepath.Join(dir, ".hg"))
		if repo {
			out = append(out, dir)
			if q := filepath.Join(dir, ".hg", "patches"); isDir(filepath.Join(q, ".hg")) {
				out = append(out, q)
			}
			if !recurse {
				return
			}
		}
		for _, e := range ents {
			if p := filepath.Join(dir, e.Name()); e.Name() != ".hg" && isDir(p) {
				walk(p)
			}
		}
	}
	walk(top)
	return out
}

// copyOverrides sets --config's settings in cfg again, so that they win
// over files read after the command's configuration was loaded.
func copyOverrides(c *cmdContext, cfg *configSet) {
	for _, sec := range c.ui.cfg.Sections() {
		for _, name := range c.ui.cfg.Names(sec) {
			if it, ok := c.ui.cfg.Lookup(sec, name); ok && it.Source == "--config" {
				cfg.Set(sec, name, it.Value, it.Source)
			}
		}
	}
}
