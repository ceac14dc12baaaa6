package worktree

import (
	"errors"
	"fmt"
	"strings"
)

// Windows' file name rules, as hg applies them to the working directory
// there (mercurial/util.py checkwinfilename, which the working-directory
// vfs calls before writing a file on Windows; keep in sync).

// winReservedNames are the device names Windows reserves, with any
// extension (util._winreservednames).
var winReservedNames = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true,
	"com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true,
	"lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

const winReservedChars = `:*?"<>|`

// WindowsNameProblem returns why the repository path p cannot be a file
// name on Windows, in hg's words, or "" if it can.
func WindowsNameProblem(p string) string {
	if strings.HasSuffix(p, `\`) {
		return `filename ends with '\', which is invalid on Windows`
	}
	if strings.Contains(p, `\/`) {
		return `directory name ends with '\', which is invalid on Windows`
	}
	for _, n := range strings.Split(strings.ReplaceAll(p, `\`, "/"), "/") {
		if n == "" {
			continue
		}
		for i := 0; i < len(n); i++ {
			c := n[i]
			if strings.IndexByte(winReservedChars, c) >= 0 {
				return fmt.Sprintf("filename contains '%c', which is reserved on Windows", c)
			}
			if c <= 31 {
				return fmt.Sprintf("filename contains '%s', which is invalid on Windows", escapeBytes(string(c), '\''))
			}
		}
		base, _, _ := strings.Cut(n, ".")
		if base != "" && winReservedNames[strings.ToLower(base)] {
			return fmt.Sprintf("filename contains '%s', which is reserved on Windows", base)
		}
		if t := n[len(n)-1]; (t == '.' || t == ' ') && n != "." && n != ".." {
			return fmt.Sprintf("filename ends with '%c', which is not allowed on Windows", t)
		}
	}
	return ""
}

// escapeBytes escapes s as Python's bytes repr does inside quotes q:
// \\, q, \t, \n and \r escaped, other bytes outside printable ASCII as
// \xNN. With q = '\” it is also stringutil.escapestr (escape_encode).
func escapeBytes(s string, q byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == q:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 32 || c >= 127:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pyBytesRepr is Python's repr of bytes, as hg's "%r" shows a path.
func pyBytesRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	return "b" + string(q) + escapeBytes(s, q) + string(q)
}

// windowsNameError is hg's refusal, on Windows, to write the file p:
// "filename contains 'aux', which is reserved on Windows: b'aux'".
func windowsNameError(p string) error {
	if msg := WindowsNameProblem(p); msg != "" {
		return errors.New(msg + ": " + pyBytesRepr(p))
	}
	return nil
}
