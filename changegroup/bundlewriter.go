package changegroup

// Writing bundle files: HG10UN and HG10GZ (cg1, as bundle2.writebundle
// writes them) and uncompressed HG20 with a changegroup part, optionally
// followed by phase-heads and bookmarks parts (as
// bundle2._addpartsfromopts orders them). hg's bzip2 output has no Go
// encoder here; hg reads every type written.

import (
	"compress/zlib"
	"fmt"
	"io"
	"strconv"

	"github.com/hgfs/hgfs/bundle2"
)

// BundleOptions selects what NewBundleWriter writes.
type BundleOptions struct {
	// Type is "HG10UN", "HG10GZ" or "HG20" ("" means HG20).
	Type string
	// Version is the changegroup version of an HG20 bundle ("" means
	// "02"); HG10 bundles always carry "01".
	Version string
	// NbChanges, when > 0, is written as the advisory "nbchanges"
	// parameter of the changegroup part (HG20).
	NbChanges int
	// PhaseHeads, when not empty, adds a phase-heads part (HG20).
	PhaseHeads []PhaseHead
	// Bookmarks, when not empty, adds a bookmarks part (HG20).
	Bookmarks map[string][20]byte
	// Compression is an HG20 bundle's: "" or "UN" for none, "ZS" for
	// zstd (bundle2.NewCompressedWriter).
	Compression string
}

// NewBundleWriter writes a bundle file's header and returns the Writer of
// its changegroup; the Writer's Close finishes the bundle (trailing parts,
// end of stream) without closing w.
func NewBundleWriter(w io.Writer, opt BundleOptions) (*Writer, error) {
	switch opt.Type {
	case "HG10UN", "HG10GZ":
		if opt.Version != "" && opt.Version != Version1 {
			return nil, unsupportedf("%s bundles carry changegroup 01, not %q", opt.Type, opt.Version)
		}
		if len(opt.PhaseHeads) > 0 || len(opt.Bookmarks) > 0 || opt.NbChanges > 0 || opt.Compression != "" {
			return nil, unsupportedf("%s bundles carry only a changegroup", opt.Type)
		}
		if _, err := io.WriteString(w, opt.Type); err != nil {
			return nil, err
		}
		if opt.Type == "HG10UN" {
			return NewWriter(w, Version1)
		}
		z := zlib.NewWriter(w)
		cw, err := NewWriter(z, Version1)
		if err != nil {
			return nil, err
		}
		cw.finish = z.Close
		return cw, nil
	case "", "HG20":
	default:
		return nil, unsupportedf("writing %q bundles", opt.Type)
	}
	version := opt.Version
	if version == "" {
		version = Version2
	}
	bw, err := bundle2.NewCompressedWriter(w, opt.Compression)
	if err != nil {
		return nil, err
	}
	var adv []bundle2.Param
	if opt.NbChanges > 0 {
		adv = append(adv, bundle2.Param{Name: "nbchanges", Value: strconv.Itoa(opt.NbChanges)})
	}
	pw, err := bw.NewPart("changegroup", true, []bundle2.Param{{Name: "version", Value: version}}, adv)
	if err != nil {
		return nil, err
	}
	cw, err := NewWriter(pw, version)
	if err != nil {
		return nil, err
	}
	cw.finish = func() error {
		if err := pw.Close(); err != nil {
			return err
		}
		if len(opt.PhaseHeads) > 0 {
			if err := bw.WritePart("phase-heads", true, nil, nil, EncodePhaseHeads(opt.PhaseHeads)); err != nil {
				return err
			}
		}
		if len(opt.Bookmarks) > 0 {
			data, err := bundle2.EncodeBookmarks(opt.Bookmarks, nil)
			if err != nil {
				return err
			}
			if err := bw.WritePart("bookmarks", true, nil, nil, data); err != nil {
				return err
			}
		}
		if err := bw.Close(); err != nil {
			return fmt.Errorf("writing bundle2: %w", err)
		}
		return nil
	}
	return cw, nil
}
