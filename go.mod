module github.com/hgfs/hgfs

go 1.26.0

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/klauspost/compress v1.20.4
	github.com/winfsp/cgofuse v1.6.0
	go.etcd.io/bbolt v1.4.3
	golang.org/x/sys v0.50.0
)
