module github.com/hgfs/hgfs

go 1.26.0

require (
	github.com/hanwen/go-fuse/v2 v2.12.1 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/winfsp/cgofuse v1.6.0 // indirect
	go.etcd.io/bbolt v1.4.3 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
