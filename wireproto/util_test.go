package wireproto

import "fmt"

func fmtSscan(s string, args ...any) (int, error) { return fmt.Sscan(s, args...) }
