package s3client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hgfs/hgfs/s3bundles"
)

// Serve is the helper's side of s3bundles' helper protocol (helper.go):
// it reads one Request from stdin, runs it, and returns the exit status:
// 0 done, 1 failed (the error's text on stderr), 2 a request it cannot
// read.
func Serve(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	var req s3bundles.Request
	dec := json.NewDecoder(io.LimitReader(stdin, s3bundles.MaxRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fmt.Fprintf(stderr, "%s: reading the request: %v\n", s3bundles.HelperName, err)
		return 2
	}
	var err error
	switch req.Op {
	case s3bundles.OpCheck, s3bundles.OpRefresh:
		var s *Store
		if s, err = Open(ctx, req.Config, req.Target); err == nil && req.Op == s3bundles.OpRefresh {
			_, err = s3bundles.Refresh(ctx, s, req.HgDir, req.Bundles, s3bundles.Options{
				Heads: req.Heads, Grace: req.Config.Grace,
				Log: func(format string, args ...any) { fmt.Fprintf(stdout, format, args...) },
			})
		}
	case s3bundles.OpGet:
		var body io.ReadCloser
		if body, err = OpenObject(ctx, req.Config, req.Target); err == nil {
			_, err = io.Copy(stdout, body)
			body.Close()
			if err != nil {
				err = fmt.Errorf("fetching %s: %w", req.Target, err)
			}
		}
	default:
		fmt.Fprintf(stderr, "%s: unknown operation %q\n", s3bundles.HelperName, req.Op)
		return 2
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
