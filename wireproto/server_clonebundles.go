package wireproto

// Clone bundles, the server's side: .hg/clonebundles.manifest served as
// hg serve serves it with the clonebundles extension (which hg 6.3 and
// 7 ship and enable per server): the "clonebundles" capability only
// while the file exists (hg 7 adds "clonebundles_manifest"), and the two
// commands (wireprotov1server.py clonebundles and clonebundles_2, with
// exchanges/bundle_cache.get_manifest_lines):
//
//	clonebundles           the manifest's lines, each ended by "\n",
//	                       joined by "\n" with a final "" (so blank
//	                       lines between them, as hg 7 sends), less the
//	                       lines an older client would misread: those
//	                       with a peer-bundle-cache:// URL or a
//	                       store fingerprint
//	clonebundles_manifest  every line, each ended by "\n"
//
// A manifest larger than MaxCloneBundlesManifest is a server error
// (logged; the client gets a 500) rather than read whole.

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"os"

	"github.com/hgfs/hgfs/internal/sysio"
)

// cloneBundleCaps are the capabilities a manifest adds.
func (s *Server) cloneBundleCaps() []string {
	if _, err := os.Stat(s.cloneBundlesPath()); err != nil {
		return nil
	}
	return []string{"clonebundles", "clonebundles_manifest"}
}

func (s *Server) cloneBundlesPath() string {
	return filepath.Join(s.root, ".hg", CloneBundlesManifestFile)
}

// cloneBundles answers clonebundles and clonebundles_manifest. A missing
// manifest is an empty answer (vfs.tryread).
func (s *Server) cloneBundles(cmd string) (string, error) {
	data, err := sysio.ReadFile(s.cloneBundlesPath(), MaxCloneBundlesManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var lines []string
	for _, l := range splitManifestLines(string(data)) {
		// get_manifest_lines: the URL, then the rest of the line as is.
		lines = append(lines, l+"\n")
	}
	if cmd == "clonebundles_manifest" {
		return strings.Join(lines, ""), nil
	}
	var kept []string
	for _, l := range lines {
		if strings.HasPrefix(l, "peer-bundle-cache://") {
			continue
		}
		if e, ok := ParseCloneBundleLine(l); ok && e.Attrs["STORE-FINGERPRINT"] != "" {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(append(kept, ""), "\n"), nil
}
