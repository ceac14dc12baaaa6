#!/bin/sh
# demo.sh HGFS_BIN — the main job on a sample repository made by real hg:
# serve it with hgfs serve, stream-clone it into a mounted hgfs cache, use
# the mounted repository with real hg, then unmount and check the cache;
# and a short tour of the inspection commands.
set -eu

HGFS=${1:?usage: demo.sh HGFS_BIN}
case $HGFS in /*) ;; *) HGFS=$(pwd)/$HGFS ;; esac
[ -x "$HGFS" ] || { echo "demo: $HGFS is not an executable" >&2; exit 1; }
command -v hg >/dev/null || { echo "demo: Mercurial's hg is not on PATH (make deps)" >&2; exit 1; }

# hg as the tests run it: no user configuration, fixed user and time zone.
export HGRCPATH= HGPLAIN=1 HGUSER="Demo User <demo@example.com>" TZ=UTC
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hgfs-demo.XXXXXX")
SERVER_PID=
MNT=$WORK/mnt
cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	if grep -qs " $MNT " /proc/self/mounts; then
		"$HGFS" unmount "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT" 2>/dev/null
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
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

heading "hgfs serve -R repo -p 0 -d   (stream clones over HTTP, read-only)"
"$HGFS" serve -R "$REPO" -a 127.0.0.1 -p 0 -d --pid-file "$WORK/serve.pid" > "$WORK/serve.out"
SERVER_PID=$(cat "$WORK/serve.pid")
cat "$WORK/serve.out"
URL=$(sed -n 's/^listening at \(http:[^ ]*\).*/\1/p' "$WORK/serve.out")

if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
	heading "hgfs clone --mount $URL mnt   (stream into a bbolt-indexed cache, then mount it)"
	"$HGFS" clone --mount --cache "$WORK/cache" "$URL" "$MNT"

	heading "the mounted repository: ls -la mnt/.hg/store"
	ls -la "$MNT/.hg/store"

	heading "real hg on the mount: hg log -l 2, hg verify, hg update"
	hg -R "$MNT" log -l 2
	hg -R "$MNT" verify
	hg -R "$MNT" update
	ls -la "$MNT"

	heading "revisions as plain files: mnt/.hgfs/ (read-only views)"
	echo "\$ ls mnt/.hgfs/rev/v1.0/docs"; ls "$MNT/.hgfs/rev/v1.0/docs"
	echo "\$ diff mnt/.hgfs/rev/0/README mnt/.hgfs/rev/tip/README"
	diff "$MNT/.hgfs/rev/0/README" "$MNT/.hgfs/rev/tip/README" || true
	echo "\$ cat mnt/.hgfs/revlogs/00changelog.i/index"; cat "$MNT/.hgfs/revlogs/00changelog.i/index"

	heading "hgfs stats mnt   (the background committer)"
	"$HGFS" stats "$MNT"

	heading "hgfs unmount mnt; hgfs fsck cache"
	"$HGFS" unmount "$MNT"
	"$HGFS" fsck "$WORK/cache"
else
	heading "no FUSE here (/dev/fuse or fusermount3 missing): cloning into a directory instead"
	"$HGFS" clone --stream "$URL" "$WORK/clone"
	hg -R "$WORK/clone" verify
fi

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
