# hgdump.py REPO: dump every revlog of REPO through Mercurial's own revlog
# code, as JSON on stdout, for the revlog package's oracle tests.
#
# For each revlog: its index file, inline/generaldelta flags, head revs, and
# per revision the raw index fields, delta parent, and rawdata (hex), as
# `hg debugdata` would print it.
import json
import sys

from mercurial import hg, ui as uimod


def dump(repo, rl):
    name = rl._indexfile
    out = {
        "index": name.decode(),
        "path": repo.store.encode(name).decode(),
        "inline": bool(rl._inline),
        "generaldelta": bool(rl._generaldelta),
        "heads": list(rl.headrevs()),
        "revs": [],
    }
    for rev in range(len(rl)):
        e = rl.index[rev]
        try:
            data = rl.rawdata(rev).hex()
            err = None
        except Exception as ex:  # censored and the like
            data, err = None, "%s: %s" % (type(ex).__name__, ex)
        out["revs"].append(
            {
                "offset": e[0] >> 16,
                "flags": e[0] & 0xFFFF,
                "complen": e[1],
                "rawlen": e[2],
                "base": e[3],
                "link": e[4],
                "p1": e[5],
                "p2": e[6],
                "node": e[7].hex(),
                "deltaparent": rl.deltaparent(rev),
                "data": data,
                "error": err,
            }
        )
    return out


def main():
    u = uimod.ui.load()
    repo = hg.repository(u, sys.argv[1].encode()).unfiltered()
    logs = [
        dump(repo, repo.changelog),
        dump(repo, repo.manifestlog.getstorage(b"")._revlog),
    ]
    for _, f, _ in sorted(repo.store.datafiles()):
        if f.startswith(b"data/") and f.endswith(b".i"):
            logs.append(dump(repo, repo.file(f[5:-2])._revlog))
    json.dump(logs, sys.stdout)


main()
