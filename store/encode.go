package store

// Store filename encodings, byte for byte as mercurial/store.py (and its C
// twin mercurial/cext/pathencode.c, which real hg uses for dotencode
// stores). Keep in sync with mercurial/store.py.
//
// An unencoded store path is what Mercurial names a revlog internally:
// "data/" + tracked path + ".i" (or ".d"), "meta/<dir>/00manifest.i",
// "00changelog.i". The on-disk name depends on the layout:
//
//	no store        EncodeDir(name)                   under .hg/
//	store           EncodeFilename(name)              under .hg/store/
//	store+fncache   HybridEncode(name, false)         under .hg/store/
//	  +dotencode    HybridEncode(name, true)          under .hg/store/
//
// EncodeDir: a directory component ending in ".hg", ".i" or ".d" gets a
// ".hg" suffix, so a file "foo" (revlog foo.i) and a directory "foo.i"
// never collide.
//
// EncodeFilename (reversible): 'A'-'Z' -> "_a".."_z", '_' -> "__", bytes
// 0-31, 126-255 and \:*?"<>| -> "~xx" (lowercase hex).
//
// HybridEncode: EncodeFilename, then Windows-reserved basenames (aux, con,
// prn, nul, com1-9, lpt1-9, with or without extension) get their third
// byte escaped, a trailing '.' or ' ' is escaped, and with dotencode a
// leading '.' or ' ' too. If the result exceeds 120 bytes the path is
// hashed instead (not reversible):
//
//	"dh/" + up to 8 bytes of each directory (at most 68 bytes in all)
//	      + as much of the basename as fits in 120 bytes
//	      + sha1(EncodeDir(name)) in hex + the basename's extension

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
)

// Constants of the hashed encoding. Keep in sync with mercurial/store.py.
const (
	maxStorePathLen = 120                    // _maxstorepathlen
	dirPrefixLen    = 8                      // _dirprefixlen
	maxShortDirsLen = 8*(dirPrefixLen+1) - 4 // _maxshortdirslen
	hashedPrefix    = "dh/"                  // replaces "data/" or "meta/"
	winReserved     = "\\:*?\"<>|"           // escaped by every encoding
	hexDigits       = "0123456789abcdef"     // "~%02x"
)

// EncodeDir escapes directory components ending in ".hg", ".i" or ".d" by
// appending ".hg" (mercurial/store.py _encodedir). It is applied to every
// store path, to fncache contents, and to names on a v1 stream.
func EncodeDir(path string) string {
	if !strings.Contains(path, ".hg/") && !strings.Contains(path, ".i/") && !strings.Contains(path, ".d/") {
		return path
	}
	path = strings.ReplaceAll(path, ".hg/", ".hg.hg/")
	path = strings.ReplaceAll(path, ".i/", ".i.hg/")
	return strings.ReplaceAll(path, ".d/", ".d.hg/")
}

// DecodeDir reverses EncodeDir (mercurial/store.py decodedir).
func DecodeDir(path string) string {
	if !strings.Contains(path, ".hg/") {
		return path
	}
	path = strings.ReplaceAll(path, ".d.hg/", ".d/")
	path = strings.ReplaceAll(path, ".i.hg/", ".i/")
	return strings.ReplaceAll(path, ".hg.hg/", ".hg/")
}

// reservedByte reports whether c is escaped as "~xx" by the fncache
// encodings (store.py _reserved).
func reservedByte(c byte) bool {
	return c < 32 || c >= 126 || strings.IndexByte(winReserved, c) >= 0
}

func appendEscape(b []byte, c byte) []byte {
	return append(b, '~', hexDigits[c>>4], hexDigits[c&15])
}

// encodeFname is store.py's _encodefname: the reversible per-byte map.
func encodeFname(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if reservedByte(c) || c == '_' || ('A' <= c && c <= 'Z') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)/2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			b = append(b, '_', c+('a'-'A'))
		case c == '_':
			b = append(b, '_', '_')
		case reservedByte(c):
			b = appendEscape(b, c)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// decodeFname is store.py's _decodefname: the exact inverse of
// encodeFname. Anything encodeFname cannot have produced (an uppercase
// letter, a lone '_', "~41", a raw reserved byte) is an error, as the
// KeyError is in Python.
func decodeFname(s string) (string, error) {
	if !strings.ContainsAny(s, "_~") {
		for i := 0; i < len(s); i++ {
			if c := s[i]; reservedByte(c) || ('A' <= c && c <= 'Z') {
				return "", fmt.Errorf("%w: %q: byte %#02x at offset %d", ErrUndecodable, s, c, i)
			}
		}
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '_':
			if i+1 < len(s) {
				if n := s[i+1]; n == '_' {
					b = append(b, '_')
					i += 2
					continue
				} else if 'a' <= n && n <= 'z' {
					b = append(b, n-('a'-'A'))
					i += 2
					continue
				}
			}
			return "", fmt.Errorf("%w: %q: bad '_' escape at offset %d", ErrUndecodable, s, i)
		case c == '~':
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if v := hi<<4 | lo; ok1 && ok2 && reservedByte(v) {
					b = append(b, v)
					i += 3
					continue
				}
			}
			return "", fmt.Errorf("%w: %q: bad '~' escape at offset %d", ErrUndecodable, s, i)
		case reservedByte(c) || ('A' <= c && c <= 'Z'):
			return "", fmt.Errorf("%w: %q: byte %#02x at offset %d", ErrUndecodable, s, c, i)
		}
		b = append(b, c)
		i++
	}
	return string(b), nil
}

// EncodeFilename is the reversible encoding of a store without fncache
// (store.py encodefilename): EncodeDir, then _x, __ and ~xx escapes.
func EncodeFilename(path string) string {
	return encodeFname(EncodeDir(path))
}

// DecodeFilename reverses EncodeFilename (store.py decodefilename). A name
// EncodeFilename cannot produce gives an error wrapping ErrUndecodable.
func DecodeFilename(path string) (string, error) {
	s, err := decodeFname(path)
	if err != nil {
		return "", err
	}
	return DecodeDir(s), nil
}

// lowerEncode is store.py lowerencode: like encodeFname but uppercase is
// folded to lowercase (not reversible) and '_' is kept.
func lowerEncode(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			b = append(b, c+('a'-'A'))
		case reservedByte(c):
			b = appendEscape(b, c)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// auxEncode is store.py _auxencode, applied in place to the (lowercase)
// components of a path.
func auxEncode(parts []string, dotencode bool) {
	for i, n := range parts {
		if n == "" {
			continue
		}
		if dotencode && (n[0] == '.' || n[0] == ' ') {
			n = string(appendEscape(nil, n[0])) + n[1:]
			parts[i] = n
		} else {
			l := strings.IndexByte(n, '.')
			if l == -1 {
				l = len(n)
			}
			if (l == 3 && isWinRes3(n[:3])) ||
				(l == 4 && n[3] >= '1' && n[3] <= '9' && (n[:3] == "com" || n[:3] == "lpt")) {
				// "aux" -> "au~78"
				n = n[:2] + string(appendEscape(nil, n[2])) + n[3:]
				parts[i] = n
			}
		}
		if last := n[len(n)-1]; last == '.' || last == ' ' {
			// "foo." -> "foo~2e"
			parts[i] = n[:len(n)-1] + string(appendEscape(nil, last))
		}
	}
}

func isWinRes3(s string) bool {
	return s == "aux" || s == "con" || s == "prn" || s == "nul"
}

// pySplitextExt returns the extension os.path.splitext gives for a name
// without '/': from the last '.', unless everything before it is dots.
func pySplitextExt(name string) string {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return ""
	}
	for i := 0; i < dot; i++ {
		if name[i] != '.' {
			return name[dot:]
		}
	}
	return ""
}

// hashEncode is store.py _hashencode; path is already EncodeDir'd and
// starts with "data/" or "meta/" (the first 5 bytes are dropped blindly,
// as in Mercurial).
func hashEncode(path string, dotencode bool) string {
	sum := sha1.Sum([]byte(path))
	digest := hex.EncodeToString(sum[:])
	rest := ""
	if len(path) > 5 {
		rest = path[5:]
	}
	parts := strings.Split(lowerEncode(rest), "/")
	auxEncode(parts, dotencode)
	basename := parts[len(parts)-1]
	ext := pySplitextExt(basename)
	var sdirs []string
	sdirsLen := 0
	for _, p := range parts[:len(parts)-1] {
		d := p
		if len(d) > dirPrefixLen {
			d = d[:dirPrefixLen]
		}
		// Windows can't access dirs ending in period or space. (Python
		// would raise IndexError on an empty component; hg never makes
		// one, and we just keep it.)
		if n := len(d); n > 0 && (d[n-1] == '.' || d[n-1] == ' ') {
			d = d[:n-1] + "_"
		}
		var t int
		if sdirsLen == 0 {
			t = len(d)
		} else {
			t = sdirsLen + 1 + len(d)
			if t > maxShortDirsLen {
				break
			}
		}
		sdirs = append(sdirs, d)
		sdirsLen = t
	}
	dirs := strings.Join(sdirs, "/")
	if len(dirs) > 0 {
		dirs += "/"
	}
	res := hashedPrefix + dirs + digest + ext
	if spaceLeft := maxStorePathLen - len(res); spaceLeft > 0 {
		filler := basename
		if len(filler) > spaceLeft {
			filler = filler[:spaceLeft]
		}
		res = hashedPrefix + dirs + filler + digest + ext
	}
	return res
}

// HybridEncode is the fncache store's encoding (store.py _hybridencode;
// with dotencode it equals _pathencode / the C pathencode real hg uses):
// the reversible encoding plus Windows-name escapes when the result fits
// in 120 bytes, the hashed "dh/" form otherwise.
func HybridEncode(path string, dotencode bool) string {
	if plainStorePath(path) {
		return path
	}
	return hybridEncode(path, dotencode)
}

// hybridEncode is HybridEncode without plainStorePath's shortcut.
func hybridEncode(path string, dotencode bool) string {
	path = EncodeDir(path)
	parts := strings.Split(encodeFname(path), "/")
	auxEncode(parts, dotencode)
	res := strings.Join(parts, "/")
	if len(res) > maxStorePathLen {
		return hashEncode(path, dotencode)
	}
	return res
}

// plainByte holds the bytes encodeFname keeps as they are.
var plainByte = func() (t [256]bool) {
	for c := range t {
		b := byte(c)
		t[c] = !reservedByte(b) && b != '_' && !('A' <= b && b <= 'Z')
	}
	return t
}()

// plainStorePath reports whether HybridEncode leaves path as it is,
// with or without dotencode: at most 120 bytes, no byte encodeFname
// escapes ('_', uppercase, reserved bytes), and no component that
// EncodeDir or auxEncode would change (one starting with '.' or a
// space, ending with '.' or a space, a directory ending in ".hg", ".i"
// or ".d", a Windows device name, an empty one). Most repositories'
// paths are plain; a checkout encodes one per file (20,000 in 19 ms of
// CPU by the full encoding, which splits and joins every path).
// FuzzHybridEncode checks it against the full encoding.
func plainStorePath(path string) bool {
	if len(path) == 0 || len(path) > maxStorePathLen {
		return false
	}
	start := 0
	for i := 0; i <= len(path); i++ {
		if i < len(path) {
			c := path[i]
			if c != '/' {
				if !plainByte[c] {
					return false
				}
				continue
			}
		}
		n := path[start:i]
		if n == "" || n[0] == '.' || n[0] == ' ' || n[len(n)-1] == '.' || n[len(n)-1] == ' ' {
			return false
		}
		if i < len(path) && (strings.HasSuffix(n, ".hg") || strings.HasSuffix(n, ".i") || strings.HasSuffix(n, ".d")) {
			return false
		}
		l := strings.IndexByte(n, '.')
		if l == -1 {
			l = len(n)
		}
		if (l == 3 && isWinRes3(n[:3])) || (l == 4 && (n[:3] == "com" || n[:3] == "lpt")) {
			return false
		}
		start = i + 1
	}
	return true
}
