package worktree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hgfs/hgfs/hgfmt"
	"github.com/hgfs/hgfs/store"
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
				return fmt.Sprintf("filename contains '%s', which is invalid on Windows", hgfmt.StringEscape(string(c)))
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

// windowsNameError is hg's refusal, on Windows, to write the file p:
// "filename contains 'aux', which is reserved on Windows: b'aux'".
func windowsNameError(p string) error {
	if msg := WindowsNameProblem(p); msg != "" {
		return errors.New(msg + ": b" + store.PyRepr(p))
	}
	return nil
}
