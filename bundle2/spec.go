package bundle2

// Bundle specifications (mercurial/bundlecaches.py parsebundlespec, in
// its strict form): the names "hg bundle -t" takes and clone bundle
// manifests carry in BUNDLESPEC,
//
//	<compression>-<version>[;<key>=<value>[;...]]
//
// compression one of "none", "gzip", "bzip2", "zstd"; version "v1"
// (changegroup 01 in HG10), "v2" and "bundle2" (changegroup 02 in HG20),
// "v3" (changegroup 03, hg 7), "packed1" (the HGS1 stream bundle),
// "streamv2" (a v2 stream; also what "v2" with stream=v2 means); the
// parameters are URL-quoted. Errors read as hg's and wrap ErrInvalidSpec
// (the string is not a bundle spec) or ErrUnsupportedSpec (it names what
// hg does not know).

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrInvalidSpec is hg's InvalidBundleSpecification.
	ErrInvalidSpec = errors.New("invalid bundle specification")
	// ErrUnsupportedSpec is hg's UnsupportedBundleSpecification.
	ErrUnsupportedSpec = errors.New("unsupported bundle specification")
)

// Spec is a parsed bundle specification.
type Spec struct {
	Compression     string // "none", "gzip", "bzip2", "zstd"
	WireCompression string // Decompress's type: "UN", "GZ", "BZ", "ZS"
	// Version is the bundle version as hg reports it ("v1", "v2", "v3",
	// "packed1", "bundle2"); a stream=v2 spec reports "v2".
	Version string
	// WireVersion is the changegroup version ("01", "02", "03"), or "s1"
	// for packed1.
	WireVersion string
	// Stream is the stream format of a stream bundle: "v2" (stream=v2 or
	// version streamv2), "v3-exp" (stream=v3-exp, hg 7); "" otherwise.
	Stream string
	// Params are the parameters, unquoted, in the order given.
	Params []Param
}

// Param returns the value of parameter key.
func (s *Spec) Param(key string) (string, bool) {
	for _, p := range s.Params {
		if p.Name == key {
			return p.Value, true
		}
	}
	return "", false
}

// Requirements is the "requirements" parameter split at commas (nil
// without one): the repository formats a stream bundle needs.
func (s *Spec) Requirements() []string {
	v, ok := s.Param("requirements")
	if !ok {
		return nil
	}
	return strings.Split(v, ",")
}

// IsStreamClone is bundlecaches.isstreamclonespec: an uncompressed
// packed1 or stream v2 (v3-exp) bundle.
func (s *Spec) IsStreamClone() bool {
	return s.WireCompression == "UN" && (s.WireVersion == "s1" || s.WireVersion == "02" && s.Stream != "")
}

// specCompressions maps hg's bundle compression names to their wire types
// (utils/compression.py bundletype()).
var specCompressions = map[string]string{"none": "UN", "gzip": "GZ", "bzip2": "BZ", "zstd": "ZS"}

// specVersions maps the versions hg knows to their changegroup version
// (bundlecaches._bundlespeccontentopts cg.version).
var specVersions = map[string]string{
	"v1": "01", "v2": "02", "v3": "03", "packed1": "s1", "bundle2": "02",
	"streamv2": "02", "streamv3-exp": "02",
}

// specBoolParams are the parameters whose value must be a boolean
// (bundlecaches.bundle_spec_param_processing).
var specBoolParams = map[string]bool{
	"obsolescence": true, "obsolescence-mandatory": true, "phases": true,
	"changegroup": true, "tagsfnodescache": true, "revbranchcache": true,
}

// MaxSpecLen bounds a bundle spec; real ones are tens of bytes, a
// packed1 spec with its requirements a few hundred.
const MaxSpecLen = 4096

// ParseSpec parses a bundle specification in hg's strict form.
func ParseSpec(spec string) (*Spec, error) {
	if len(spec) > MaxSpecLen {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrInvalidSpec, MaxSpecLen)
	}
	if !strings.Contains(spec, "-") {
		return nil, fmt.Errorf("%w; must be prefixed with compression: %s", ErrInvalidSpec, spec)
	}
	compression, rest, _ := strings.Cut(spec, "-")
	wire, ok := specCompressions[compression]
	if !ok {
		return nil, fmt.Errorf("%w: %s compression is not supported", ErrUnsupportedSpec, compression)
	}
	version, paramStr, hasParams := strings.Cut(rest, ";")
	s := &Spec{Compression: compression, WireCompression: wire}
	if hasParams {
		for _, p := range strings.Split(paramStr, ";") {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				return nil, fmt.Errorf("%w: missing \"=\" in parameter: %s", ErrInvalidSpec, p)
			}
			k, v = Unquote(k), Unquote(v)
			if specBoolParams[k] {
				if _, ok := parseBool(v); !ok {
					return nil, fmt.Errorf("%w: parameter %s should be a boolean ('%s')", ErrInvalidSpec, k, v)
				}
			}
			s.Params = append(s.Params, Param{Name: k, Value: v})
		}
	}
	if _, ok := specVersions[version]; !ok {
		return nil, fmt.Errorf("%w: %s is not a recognized bundle version", ErrUnsupportedSpec, version)
	}
	if version == "v1" && wire != "UN" && wire != "GZ" && wire != "BZ" {
		return nil, fmt.Errorf("%w: compression engine %s is not supported on v1 bundles", ErrUnsupportedSpec, compression)
	}
	switch v, _ := s.Param("stream"); {
	case v == "v2" || version == "streamv2":
		version, s.Stream = "streamv2", "v2"
	case v == "v3-exp" || version == "streamv3-exp":
		version, s.Stream = "streamv3-exp", "v3-exp"
	}
	if s.Stream != "" {
		// bundlecaches: stream bundles have been reported as "v2".
		version = "v2"
	}
	s.Version, s.WireVersion = version, specVersions[version]
	return s, nil
}

// parseBool is stringutil.parsebool.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on", "always":
		return true, true
	case "0", "no", "false", "off", "never":
		return false, true
	}
	return false, false
}
