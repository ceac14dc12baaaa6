#!/bin/sh
# wine-test.sh — `make test-windows`: the Windows build (GOOS=windows
# CGO_ENABLED=0) tested under Wine, as root (scripts/wine.sh installs Wine
# from Debian sid on first use and makes the wrapper used here).
#
# 1. The tests of the packages below, compiled for Windows and run under
#    Wine (go test -exec). They need no FUSE; the tests that start Linux
#    programs (hg, python3) skip under Wine and say so: a Windows program
#    cannot start them. The counts and each skip reason are printed.
# 2. TestWineEndToEnd on Linux: hgfs.exe under Wine clones, unbundles,
#    serves, verifies, logs and cats, and real hg on Linux checks each
#    result (cmd/hgfs/wine_test.go).
# The exit status is 1 if either failed.
set -u
cd "$(dirname "$0")/.." || exit 1
GO=${GO:-go}
PKGS=${HGFS_WINE_PKGS:-./revlog/ ./store/ ./streamclone/ ./changegroup/ ./txn/ ./exchange/ ./config/ ./repo/ ./hgfmt/ ./wireproto/ ./s3bundles/ ./profiling/ ./cmd/hgfs/}

wine=$(./scripts/wine.sh) || exit 1
"$wine" --version || exit 1
# Wine sees the checkout's parent (the project and ../shared/corpus).
HGFS_WINE_BIND=$(cd .. && pwd -P)
export HGFS_WINE_BIND
log=$(mktemp)
e2elog=$(mktemp)
exe=$(mktemp -d)/hgfs.exe
trap 'rm -f "$log" "$e2elog"; rm -rf "$(dirname "$exe")"' EXIT
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 "$GO" build -o "$exe" ./cmd/hgfs || exit 1

# The end-to-end test runs meanwhile: both mostly wait for Wine to start.
start=$(date +%s)
(
	HGFS_WINE=$wine HGFS_WINE_EXE=$exe "$GO" test -count=1 -timeout 20m -run 'TestWineEndToEnd' -v ./cmd/hgfs/ >"$e2elog" 2>&1
	echo "exit $?" >>"$e2elog"
) &
e2e=$!

# HGFS_BIN: the tests that run the binary run hgfs.exe, named as a
# Windows path (a Windows program does not start "/tmp/x.exe").
# shellcheck disable=SC2086
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 HGFS_BIN="Z:$(echo "$exe" | tr / \\\\)" \
	"$GO" test -exec "$wine" -count=1 -timeout 20m -v $PKGS >"$log" 2>&1
rc=$?
# The package results and build errors ("# pkg" and file:line:col), and
# every failure with its output.
grep -E '^(ok|FAIL|panic:|---|# )|^[[:space:]]+--- FAIL|^[^[:space:]]+\.go:[0-9]+:[0-9]+: ' "$log" | grep -v -- '--- \(PASS\|SKIP\)'
if [ $rc != 0 ]; then
	awk '/^[[:space:]]*--- FAIL/ { show = 1; print; next } /^[[:space:]]*(--- |=== )/ { show = 0 } show' "$log"
fi
count() { grep -cE "^[[:space:]]*--- $1:" "$log"; }
echo "under Wine: $(count PASS) tests passed, $(count SKIP) skipped, $(count FAIL) failed (top-level tests and subtests) in $(($(date +%s) - start)) s"
echo "skip reasons:"
sed -n 's/^[[:space:]]*[A-Za-z_0-9]*\.go:[0-9]*: \(skipping.*\)/\1/p' "$log" | sort | uniq -c | sort -rn

wait $e2e
grep -E '^[[:space:]]*--- |^(ok|FAIL)' "$e2elog"
rc2=1
tail -1 "$e2elog" | grep -qx 'exit 0' && rc2=0
[ $rc2 = 0 ] || cat "$e2elog"
echo "end to end under Wine: $(($(date +%s) - start)) s (from the start of the package tests)"
[ $rc = 0 ] && [ $rc2 = 0 ]
