// Command hgfs-s3 is hgfs's S3 helper: hgfs runs it to publish clone
// bundles to an object store (hgfs clonebundles refresh) and to clone
// from an s3:// object, so that only those commands link an S3 client
// (s3bundles/helper.go says why). It reads one request as JSON on stdin;
// it is not meant to be run by hand.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hgfs/hgfs/s3bundles/s3client"
)

func main() {
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		// Started by hand, at a terminal: no request will come.
		fmt.Fprintln(os.Stderr, "hgfs-s3 is hgfs's S3 helper, which hgfs runs itself (hgfs help clonebundles)")
		os.Exit(2)
	}
	// An interrupt (^C at the terminal, or hgfs ending the operation)
	// cancels the request: a refresh stops between its atomic writes.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := s3client.Serve(ctx, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
