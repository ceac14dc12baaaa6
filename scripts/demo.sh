#!/bin/sh
# demo.sh HGFS_BIN — a short tour of hgfs on a sample repository made by
# real hg: history, manifest, file contents, the raw changelog index and a
# full integrity check, each next to what it is.
set -eu

HGFS=${1:?usage: demo.sh HGFS_BIN}
case $HGFS in /*) ;; *) HGFS=$(pwd)/$HGFS ;; esac
[ -x "$HGFS" ] || { echo "demo: $HGFS is not an executable" >&2; exit 1; }
command -v hg >/dev/null || { echo "demo: Mercurial's hg is not on PATH (make deps)" >&2; exit 1; }

# hg as the tests run it: no user configuration, fixed user and time zone.
export HGRCPATH= HGPLAIN=1 HGUSER="Demo User <demo@example.com>" TZ=UTC
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hgfs-demo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
REPO=$WORK/repo

if [ -t 1 ]; then
	heading() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	heading() { printf '\n== %s\n' "$*"; }
fi

heading "Making a sample repository with hg in $REPO"
hg init "$REPO"
cd "$REPO"
mkdir -p src docs
printf 'hgfs demo\n' > README
printf 'package main\n\nfunc main() {}\n' > src/main.go
printf '# Notes\n' > docs/NOTES.md
hg commit -qA -m "initial import" -d "1700000000 0"
printf 'more notes\n' >> docs/NOTES.md
hg commit -q -m "expand the notes" -d "1700003600 -3600"
hg tag -q -d "1700007200 0" v1.0
hg branch -q stable
printf 'stable fix\n' >> README
hg commit -q -m "fix on stable" -d "1700010800 18000"
hg bookmark -q demo-bookmark
echo "4 changesets, a tag, a named branch and a bookmark"

heading "hgfs log -l 3"
"$HGFS" log -l 3

heading "hgfs manifest -v"
"$HGFS" manifest -v

heading "hgfs cat -r v1.0 README docs/NOTES.md"
"$HGFS" cat -r v1.0 README docs/NOTES.md

heading "hgfs debugindex -c   (the changelog's index entries)"
"$HGFS" debugindex -c

heading "hgfs verify"
"$HGFS" verify

heading "hg verify agrees"
hg verify -q && echo "hg verify: no problems"
