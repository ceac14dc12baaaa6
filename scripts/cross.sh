#!/bin/sh
# cross.sh [OUTDIR] — build hgfs for every platform it ships on, without
# cgo (Windows mounts through WinFsp's DLL, loaded at run time; macOS has
# no mount backend in a cgo-free build), vet the tree as Windows and macOS
# see it, and, where a C compiler and libfuse3's headers are present, build
# the Linux cgofuse variant (-tags cgofuse,fuse3). Every step runs even
# after a failure; the summary lists each, and the exit status is 1 if any
# failed. `make cross` runs this.
set -u

GO=${GO:-go}
OUT=${1:-bin/cross}
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$OUT" || exit 1

failed=0
summary=""
step() { # step NAME CMD...: run CMD, record NAME as ok or FAILED
	name=$1
	shift
	printf '== %s\n' "$name"
	if "$@"; then
		summary="$summary
ok      $name"
	else
		summary="$summary
FAILED  $name"
		failed=1
	fi
}

for target in windows/amd64 windows/arm64 darwin/amd64 darwin/arm64 linux/amd64 linux/arm64; do
	os=${target%/*}
	arch=${target#*/}
	exe=""
	[ "$os" = windows ] && exe=.exe
	step "build $target" env CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" \
		"$GO" build -trimpath -o "$OUT/hgfs-$os-$arch$exe" ./cmd/hgfs
	step "build $target S3 helper" env CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" \
		"$GO" build -trimpath -o "$OUT/hgfs-s3-$os-$arch$exe" ./cmd/hgfs-s3
done

step "vet windows/amd64" env CGO_ENABLED=0 GOOS=windows GOARCH=amd64 "$GO" vet ./...
step "vet darwin/arm64" env CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 "$GO" vet ./...

if command -v "${CC:-cc}" >/dev/null 2>&1 && [ -e /usr/include/fuse3/fuse.h ]; then
	step "build linux/$($GO env GOARCH) -tags cgofuse,fuse3" env CGO_ENABLED=1 \
		"$GO" build -tags cgofuse,fuse3 -o "$OUT/hgfs-linux-cgofuse" ./cmd/hgfs
	step "vet linux -tags cgofuse,fuse3" env CGO_ENABLED=1 "$GO" vet -tags cgofuse,fuse3 ./mount/... ./cmd/hgfs/...
else
	summary="$summary
skipped build -tags cgofuse,fuse3 (needs a C compiler and libfuse3-dev)"
fi

printf '\nsummary:%s\n' "$summary"
exit $failed
