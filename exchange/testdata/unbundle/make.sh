#!/usr/bin/env bash
# make.sh: writes the unbundle fuzz seeds of this directory with real
# Mercurial (6.3). Run it from this directory, with the workspace's
# real-history corpus (../shared/corpus/mercurial-history-2971.hg beside the
# project's root, or $HGFS_CORPUS):
#
#   cd exchange/testdata/unbundle && ./make.sh
#
# It rewrites every *.hg here. base-*.hg are the repositories the cut
# bundles were made against (exchange's fuzz tests load them with hg
# unbundle); every other bundle is a seed. The README says which is which.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=${HGFS_CORPUS:-$here/../../../../shared/corpus}/mercurial-history-2971.hg
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HGPLAIN=1 HGRCPATH= HGUSER=seed TZ=UTC
hg() { command hg --config ui.username=seed --config devel.default-date='0 0' --config experimental.changegroup3=true --config experimental.evolution=all "$@"; }
rm -f "$here"/*.hg

# Cuts of real history: Mercurial's own first changesets.
hg init "$work/corpus"
hg -R "$work/corpus" unbundle -q "$corpus"
cut() { # cut NAME REVS BASE TYPE
	hg -R "$work/corpus" bundle -q -r "$2" --base "$3" -t "$4" "$here/$1.hg"
}
hg -R "$work/corpus" bundle -q -r 98 --base null -t zstd-v2 "$here/base-corpus98.hg"
hg -R "$work/corpus" bundle -q -r 127 --base null -t zstd-v2 "$here/base-corpus127.hg"
cut corpus-99-101 '99:101' 98 none-v2               # linear, a few files
cut corpus-99-110 '99:110' 98 none-v2               # merges 103 and 104
cut corpus-99-110-v1 '99:110' 98 none-v1
cut corpus-128-140 '128:140' 127 'none-v2;cg.version=03'  # rename 131, merge 137

# A small repository with what the corpus cuts lack: empty files, binary
# files, a copy, a rename, exec and symlink flags, a named branch, a merge,
# a bookmark, draft and secret changesets, an obsolescence marker.
r=$work/small
hg init "$r"
cd "$r"
printf 'one\n' > a.txt; : > empty; printf '\0\1\2bin\0\377' > b.bin
hg commit -qAm c0
hg cp a.txt copy.txt; printf 'one\ntwo\n' > a.txt; chmod +x a.txt
hg commit -qm c1
hg mv b.bin moved.bin; ln -s a.txt link; : > empty2
hg commit -qAm c2
hg phase -q --public -r .
hg branch -q feature; printf 'feature\n' > f.txt
hg commit -qAm c3
hg update -q default; printf 'one\ntwo\nthree\n' > a.txt; printf '\0\0more\377' >> moved.bin
hg commit -qm c4
hg merge -q feature; hg commit -qm 'merge feature'
hg bookmark -q -r . bm
printf 'x\n' > empty; hg commit -qm 'c6 fills empty'
printf 'secret\n' > s.txt; hg commit -qAm 'c7 secret' --secret
hg update -q 6
printf 'amended\n' >> a.txt
hg commit -qm c8
hg commit -q --amend -m 'c8 amended'
hg bundle -q -r 'public()' --base null -t zstd-v2 "$here/base-small.hg"
for t in none-v1 gzip-v1 none-v2 'none-v2;cg.version=03' zstd-v2; do
	name=small-$(tr -c 'a-z0-9\n' - <<<"$t" | sed 's/cg-version-03/cg3/;s/--*/-/g')
	hg bundle -q -a -t "$t" "$here/$name.hg"
done
hg bundle -q -a -t 'none-v2;obsolescence=true;phases=true' "$here/small-phases-obsmarkers.hg"
hg bundle -q -r 'draft() or secret()' --base 'public()' \
	-t 'none-v2;cg.version=03;obsolescence=true;phases=true' "$here/small-cut-cg3.hg"
# Three changegroup parts (0..2, 3..5, the rest: the second and third touch
# files of the first), then a bookmarks part setting one bookmark and
# deleting another, written by Mercurial's own bundle2 module (hg bundle
# writes one changegroup part).
hgpython=$(sed -n '1s/^#! *//p' "$(type -P hg)")
$hgpython - "$r" "$here/small-parts.hg" <<'PY'
import os, sys
from mercurial import bookmarks, bundle2, changegroup, discovery, hg, ui as uimod
u = uimod.ui.load()
u.setconfig(b'experimental', b'evolution', b'all')
repo = hg.repository(u, os.fsencode(sys.argv[1]))
bundler = bundle2.bundle20(u)
common = []
for head in (2, 5, b'tip'):
    out = discovery.outgoing(repo, commonheads=common, ancestorsof=[repo[head].node()])
    part = bundler.newpart(b'changegroup', data=changegroup.makestream(repo, out, b'02', b'bundle'))
    part.addparam(b'version', b'02')
    common = [repo[head].node()]
bundler.newpart(b'bookmarks', data=bookmarks.binaryencode(repo, [(b'bm', repo[5].node()), (b'gone', None)]))
with open(sys.argv[2], 'wb') as f:
    for chunk in bundler.getchunks():
        f.write(chunk)
PY

# A file past the inline limit (128 KiB of incompressible data): its
# filelog is split (.i + .d) in the base, and a changegroup of the whole
# history splits it while it is applied.
r=$work/split
hg init "$r"
cd "$r"
python3 -c 'import random,sys; r=random.Random(1); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(140000)))' > big.bin
printf 'small\n' > small.txt
hg commit -qAm s0
python3 -c 'import sys; b=bytearray(open("big.bin","rb").read()); b[1000:1010]=b"0123456789"; sys.stdout.buffer.write(b)' > big.new && mv big.new big.bin
hg commit -qm s1
printf 'tail\n' >> big.bin; printf 'small\nmore\n' > small.txt
hg commit -qm s2
hg bundle -q -r 0 --base null -t zstd-v2 "$here/base-split.hg"
hg bundle -q -r 1:2 --base 0 -t none-v2 "$here/split-cut.hg"
hg bundle -q -a -t none-v2 "$here/split-all.hg"
ls -l "$here"/*.hg
