#!/bin/sh
# hg7.sh [ROOT] — install Mercurial 7 beside the system's hg 6.3, for the
# test suite's second oracle. Prints the path of the hg 7 command.
#
# Debian bookworm ships hg 6.3; hg 7.x comes from Debian sid. debootstrap
# makes a minimal sid tree in ROOT (default /var/cache/hgfs/sid) with
# mercurial installed, and ROOT/hg7 runs it without entering the chroot:
# sid's own dynamic loader starts sid's python with sid's libraries, so hg 7
# sees the host's file system as it is (test repositories, sockets, ssh) and
# no bind mount or /proc is needed. HG points at the wrapper, so the
# processes hg starts of itself (hg serve -d, hooks) are hg 7 too.
#
# Run as root (debootstrap needs it). A tree already there is reused; an
# interrupted install is started again from scratch.
set -eu

ROOT=${1:-${HGFS_SID_ROOT:-/var/cache/hgfs/sid}}
MIRROR=${HGFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
WRAPPER=$ROOT/hg7

if [ -x "$WRAPPER" ] && "$WRAPPER" --version >/dev/null 2>&1; then
	echo "$WRAPPER"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "hg7.sh: installing hg 7 needs root (debootstrap); run 'sudo $0'" >&2
	exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

rm -rf "$ROOT.partial"
mkdir -p "$(dirname "$ROOT")"
echo "hg7.sh: installing Mercurial from Debian sid into $ROOT (debootstrap, about two minutes)" >&2
if ! debootstrap --variant=minbase --include=mercurial sid "$ROOT.partial" "$MIRROR" >"$ROOT.log" 2>&1; then
	tail -20 "$ROOT.log" >&2
	echo "hg7.sh: debootstrap failed (whole log: $ROOT.log)" >&2
	exit 1
fi
rm -rf "$ROOT"
mv "$ROOT.partial" "$ROOT"

# The interpreter hg's #! line names, resolved inside the tree.
py=$(sed -n '1s/^#! *//p' "$ROOT/usr/bin/hg")
py=$(readlink -f "$ROOT$py")
ld=$ROOT/lib64/ld-linux-x86-64.so.2
libs=$ROOT/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu
cat >"$WRAPPER" <<EOF
#!/bin/sh
# Mercurial from Debian sid, run with sid's loader and libraries
# (made by hgfs's scripts/hg7.sh).
# python finds its library from its own path; nothing PYTHON* is
# exported, so the processes hg starts (ssh, hg 6.3 on the other end)
# run with their own.
HG='$WRAPPER'
export HG
exec '$ld' --library-path '$libs' '$py' -B '$ROOT/usr/bin/hg' "\$@"
EOF
chmod +x "$WRAPPER"
if ! "$WRAPPER" --version >/dev/null; then
	echo "hg7.sh: $WRAPPER does not run" >&2
	exit 1
fi
echo "$WRAPPER"
