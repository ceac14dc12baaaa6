#!/bin/sh
# seaweedfs.sh [DIR] — build SeaweedFS's weed command, the S3-compatible
# object store the clone bundle tests (s3bundles, hgfs clonebundles) run
# against. Prints the path of the weed binary.
#
# `go install github.com/seaweedfs/seaweedfs/weed@VERSION` refuses the
# module (its go.mod has replace directives), so the module's source is
# fetched from the Go module proxy (go mod download) and built as a main
# module of its own, with its own go.mod and go.sum: hgfs's go.mod is not
# involved. The binary is cached in DIR (default /var/cache/hgfs/seaweedfs)
# as weed-VERSION; a cached one that runs is reused. The first build takes
# several minutes.
set -eu

VERSION=v0.0.0-20261109003541-7506e5f91cd6
MODULE=github.com/seaweedfs/seaweedfs
DIR=${1:-${HGFS_SEAWEEDFS_DIR:-/var/cache/hgfs/seaweedfs}}
BIN=$DIR/weed-$VERSION

if [ -x "$BIN" ] && "$BIN" version >/dev/null 2>&1; then
	echo "$BIN"
	exit 0
fi
GO=${GO:-go}
if ! command -v "$GO" >/dev/null 2>&1; then
	echo "seaweedfs.sh: needs the go command to build SeaweedFS" >&2
	exit 1
fi
mkdir -p "$DIR"
src=$(cd "$DIR" && GOFLAGS=-mod=mod "$GO" mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$src" ] || [ ! -d "$src" ]; then
	echo "seaweedfs.sh: go mod download $MODULE@$VERSION failed" >&2
	exit 1
fi
echo "seaweedfs.sh: building SeaweedFS $VERSION into $BIN (several minutes)" >&2
rm -rf "$DIR/src.partial"
cp -R "$src" "$DIR/src.partial"
chmod -R u+w "$DIR/src.partial"
if ! (cd "$DIR/src.partial" && GOFLAGS=-mod=mod "$GO" build -o "$BIN.partial" ./weed) >"$DIR/build.log" 2>&1; then
	tail -20 "$DIR/build.log" >&2
	echo "seaweedfs.sh: go build failed (whole log: $DIR/build.log)" >&2
	exit 1
fi
mv "$BIN.partial" "$BIN"
rm -rf "$DIR/src.partial"
echo "$BIN"
