package sysio

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CopyFile makes dst a copy of src, with src's permission bits, through
// a temporary ".NAME-XXXX~" file beside dst renamed over it, so dst is
// never seen half-written. src and dst may be the same path: the copy
// then stands alone (BreakLink).
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	dir, name := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	out, err := os.CreateTemp(dir, "."+name+"-*~")
	if err != nil {
		return err
	}
	tmp := out.Name()
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(st.Mode().Perm())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return nil
}
