#!/bin/sh
# wine.sh [ROOT] — install Wine beside the system, for running hgfs's
# Windows build (GOOS=windows CGO_ENABLED=0) on Linux. Prints the path of
# a wrapper, ROOT/hgfs-wine, that runs a Windows program under Wine:
#
#	ROOT/hgfs-wine PROGRAM.exe [ARG...]
#	GOOS=windows CGO_ENABLED=0 go test -exec ROOT/hgfs-wine ./revlog/
#
# Debian bookworm's Wine 8 cannot start Go 1.26 binaries (it has no
# bcryptprimitives.dll); Debian sid's Wine 10 can. ROOT (default
# /var/cache/hgfs/wine) is a sid tree with wine64 installed. It starts as a
# copy of the sid tree scripts/hg7.sh makes, when there is one (3 s,
# against about two minutes for debootstrap), and is a tree of its own so
# that neither script's reinstall touches the other's. Installing wine64
# into it (2.1 GB) took 1 min 41 s on an idle machine here, 5 min on a
# busy one. A Wine prefix is made once (ROOT/opt/hgfs-wineprefix, 1.2 GB:
# Wine 10 copies its DLLs into it; 27 s); each run of the wrapper lays a
# fresh, empty overlay over it, so runs are independent, start in 2 s
# (idle) to 8 s (busy) and leave nothing behind.
#
# The wrapper runs as root. It enters private mount and PID namespaces
# (unshare), mounts /proc and /dev into ROOT, binds into ROOT, at the same
# paths, the directories the program needs: the program's own, the
# current directory, TMPDIR (else /tmp) and those HGFS_WINE_BIND names
# (colon-separated); then it chroots and runs wine64 with WINEPREFIX on
# the overlay, WINEDEBUG=-all and XDG_RUNTIME_DIR set. Afterwards it kills
# wineserver and every other process left in its PID namespace and
# removes the overlay; if the wrapper itself is killed, the namespaces
# go with it (mounts and processes; only the overlay's directory in
# TMPDIR stays). Its exit status is the program's; 125 means the
# wrapper itself failed.
#
# Run as root. A tree already there is reused; an interrupted install is
# started again from scratch.
set -eu

ROOT=${1:-${HGFS_WINE_ROOT:-/var/cache/hgfs/wine}}
SID=${HGFS_SID_ROOT:-/var/cache/hgfs/sid}
MIRROR=${HGFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
WRAPPER=$ROOT/hgfs-wine
PREFIX=/opt/hgfs-wineprefix

if [ "$(id -u)" != 0 ]; then
	if [ -x "$WRAPPER" ] && "$WRAPPER" --version >/dev/null 2>&1; then
		echo "$WRAPPER"
		exit 0
	fi
	echo "wine.sh: installing Wine needs root (debootstrap, chroot); run 'sudo $0'" >&2
	exit 1
fi

# in_root DIR CMD...: run CMD chrooted in DIR with /proc and /dev mounted,
# in a private mount namespace (the mounts end with it).
in_root() {
	dir=$1
	shift
	unshare --mount --propagation private sh -c '
		dir=$1; shift
		mount -t proc proc "$dir/proc" && mount --rbind /dev "$dir/dev" && exec chroot "$dir" "$@"' \
		sh "$dir" "$@"
}

start=$(date +%s)
if [ ! -e "$ROOT/.hgfs-wine-complete" ]; then
	rm -rf "$ROOT.partial"
	mkdir -p "$(dirname "$ROOT")"
	log=$ROOT.log
	: >"$log"
	if [ -x "$SID/hg7" ] && [ -e "$SID/etc/debian_version" ]; then
		echo "wine.sh: copying the Debian sid tree $SID to $ROOT" >&2
		cp -a "$SID" "$ROOT.partial"
		rm -f "$ROOT.partial/hg7"
	else
		if ! command -v debootstrap >/dev/null 2>&1; then
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
		fi
		echo "wine.sh: making a Debian sid tree in $ROOT (debootstrap, about two minutes)" >&2
		if ! debootstrap --variant=minbase sid "$ROOT.partial" "$MIRROR" >>"$log" 2>&1; then
			tail -20 "$log" >&2
			echo "wine.sh: debootstrap failed (whole log: $log)" >&2
			exit 1
		fi
	fi
	echo "wine.sh: installing wine64 from Debian sid (about two minutes)" >&2
	# A sid snapshot's Release file may be past its Valid-Until date.
	apt="apt-get -o Acquire::Check-Valid-Until=false"
	if ! in_root "$ROOT.partial" $apt update -qq >>"$log" 2>&1 ||
		! in_root "$ROOT.partial" env DEBIAN_FRONTEND=noninteractive \
			$apt install -y -qq --no-install-recommends wine64 >>"$log" 2>&1; then
		tail -20 "$log" >&2
		echo "wine.sh: installing wine64 failed (whole log: $log)" >&2
		exit 1
	fi
	in_root "$ROOT.partial" apt-get clean
	echo "wine.sh: making the Wine prefix" >&2
	mkdir -p "$ROOT.partial/run/hgfs-wine"
	if ! in_root "$ROOT.partial" env WINEPREFIX=$PREFIX WINEDEBUG=-all XDG_RUNTIME_DIR=/run/hgfs-wine \
		sh -c 'wine64 wineboot -i && /usr/lib/x86_64-linux-gnu/wine/wineserver -w' >>"$log" 2>&1; then
		tail -20 "$log" >&2
		echo "wine.sh: wineboot failed (whole log: $log)" >&2
		exit 1
	fi
	touch "$ROOT.partial/.hgfs-wine-complete"
	rm -rf "$ROOT"
	mv "$ROOT.partial" "$ROOT"
	echo "wine.sh: installed in $(($(date +%s) - start)) s" >&2
fi

# The wrapper is written each time, so a changed script takes effect.
cat >"$WRAPPER.new" <<'EOF'
#!/bin/sh
# hgfs-wine PROGRAM [ARG...] — run a Windows program under Wine from
# Debian sid (made by hgfs's scripts/wine.sh, which says how).
# hgfs-wine --version prints Wine's version.
ROOT=@ROOT@
PREFIX=@PREFIX@
if [ "$(id -u)" != 0 ]; then
	echo "hgfs-wine: needs root (chroot, mount namespaces)" >&2
	exit 125
fi
if [ "${1:-}" = --version ]; then
	exec unshare --mount --propagation private sh -c \
		'mount -t proc proc "$1/proc" && exec chroot "$1" wine64 --version' sh "$ROOT"
fi
base=${TMPDIR:-/tmp}
prog=$(readlink -f "${1:?usage: hgfs-wine PROGRAM [ARG...]}") || exit 125
shift
tmp=$(mktemp -d "$base/hgfs-wine.XXXXXX") || exit 125
mkdir "$tmp/upper" "$tmp/work" "$tmp/prefix" || exit 125
# The directories to bind, parents before children (a later bind of a
# parent would hide an earlier one of a child).
binds=$({
	readlink -f "$base"
	dirname "$prog"
	pwd -P
	echo "${HGFS_WINE_BIND:-}" | tr : '\n' | while IFS= read -r d; do
		[ -n "$d" ] && readlink -f "$d"
	done
} | awk 'NF && $0 != "/" && !seen[$0]++ { print length($0) "\t" $0 }' | sort -n | cut -f2-)
export ROOT PREFIX tmp prog binds
# Wine converts file names and arguments with the Unix locale's charset:
# UTF-8, whatever the caller's (hg's tests run in LC_ALL=C).
export WINEPREFIX="$tmp/prefix" WINEDEBUG=-all XDG_RUNTIME_DIR="$tmp" LC_ALL=C.UTF-8
# unshare runs in the background so that this shell can turn SIGTERM,
# SIGINT and SIGHUP into the end of the namespaces (unshare --fork
# ignores them); --pdeathsig ends them too if this shell is killed.
exec 3<&0
setpriv --pdeathsig KILL unshare --mount --pid --fork --kill-child --propagation private sh -c '
	mount -t proc proc "$ROOT/proc" && mount --rbind /dev "$ROOT/dev" || exit 125
	echo "$binds" | while IFS= read -r d; do
		mkdir -p "$ROOT$d" && mount --bind "$d" "$ROOT$d" || exit 125
	done || exit 125
	mount -t overlay overlay -o "lowerdir=$ROOT$PREFIX,upperdir=$tmp/upper,workdir=$tmp/work" \
		"$ROOT$tmp/prefix" || exit 125
	chroot "$ROOT" sh -c "cd \"\$1\" || exit 125; shift; wine64 \"\$@\"" \
		sh "$(pwd -P)" "$prog" "$@"
	rc=$?
	# This shell is the PID namespace'"'"'s init: kill -1 reaches wineserver
	# and whatever else Wine left, and nothing outside (faster than
	# wineserver -k, which waits for a clean shutdown).
	kill -KILL -1 2>/dev/null
	exit $rc' sh "$@" <&3 3<&- &
child=$!
exec 3<&-
trap 'kill -KILL $child 2>/dev/null' HUP INT TERM
while :; do
	wait $child
	rc=$?
	kill -0 $child 2>/dev/null || break
done
rm -rf "$tmp"
exit $rc
EOF
sed -i "s|@ROOT@|'$ROOT'|; s|@PREFIX@|'$PREFIX'|" "$WRAPPER.new"
chmod +x "$WRAPPER.new"
# Renamed into place: a wrapper running meanwhile keeps reading the old one.
mv "$WRAPPER.new" "$WRAPPER"
if ! "$WRAPPER" --version >/dev/null; then
	echo "wine.sh: $WRAPPER does not run" >&2
	exit 1
fi
echo "$WRAPPER"
