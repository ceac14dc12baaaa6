package mount

import "os"

// ownerUID and ownerGID own the files the daemon makes up (views, the
// repository mount's root, .hgfs): the daemon's own credentials, which
// do not change while it runs. Read once: each os.Getuid is a system
// call, and a first walk of a 20,000-file view made two per file (3% of
// the daemon's CPU).
var ownerUID, ownerGID = uint32(os.Getuid()), uint32(os.Getgid())
