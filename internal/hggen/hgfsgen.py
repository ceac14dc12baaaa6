# hgfsgen: a Mercurial extension that builds a repository from a JSON plan
# in one hg process (see gen.go). Everything is written by Mercurial itself
# (memctx commits, bookmarks, phases, obsolescence markers, update), so the
# result is a genuine repository; doing it in-process keeps generation fast.
#
# Plan (all strings UTF-8; file data base64):
#   commits:   [{parents: [i, j], user, date: [secs, tz], desc, branch,
#                files: {path: {data, flags, copy} | null}}]   null = removed
#              (or {edits: [[line, text, insert]], ...} in place of data:
#              an edit of the file's previous content, see edit)
#   bookmarks: {name: commit index}
#   localtags: [[commit index, name]]
#   public:    commit index (it and its ancestors become public) or -1
#   secret:    [commit index]
#   obsolete:  [[precursor index, successor index or -1]]
#   update:    commit index for the working directory, or -1
import base64
import json
import re

from mercurial import (
    context,
    hg,
    node as nodemod,
    obsolete,
    phases,
    registrar,
)

cmdtable = {}
command = registrar.command(cmdtable)

NODEREF = re.compile(rb'\{node:(\d+)\}')


def edit(data, edits):
    """Applies a plan's line edits to data: [line, text, insert] each,
    line taken modulo the line count (the plan does not track content);
    insert puts text before that line, else text replaces it."""
    lines = data.split(b'\n')[:-1] if data else []
    for line, text, insert in edits:
        text = text.encode('utf-8')
        if not lines or line >= 1 << 30:
            lines.append(text)
        elif insert:
            lines.insert(line % (len(lines) + 1), text)
        else:
            lines[line % len(lines)] = text
    return b''.join(l + b'\n' for l in lines)


@command(b'hgfsgen', [], b'PLAN')
def hgfsgen(ui, repo, planpath):
    with open(planpath, 'rb') as f:
        plan = json.load(f)
    nodes = []
    current = {}  # path -> its content as last committed by the plan

    def expand(data):
        # .hgtags lines name commits made earlier in the same plan.
        return NODEREF.sub(lambda m: nodemod.hex(nodes[int(m.group(1))]), data)

    with repo.wlock(), repo.lock():
        with repo.transaction(b'hgfsgen') as tr:
            for c in plan['commits']:
                files = {}
                for p, f in c['files'].items():
                    path = p.encode('utf-8')
                    if f is not None and f.get('edits') is not None:
                        # An edit of the file's previous content (the
                        # long histories' plans carry edits, not texts).
                        f = dict(f, data=edit(current.get(path, b''), f['edits']))
                    elif f is not None:
                        f = dict(f, data=base64.b64decode(f['data']))
                    if f is None:
                        current.pop(path, None)
                    else:
                        current[path] = f['data']
                    files[path] = f

                def filectxfn(repo, mctx, path, files=files):
                    f = files[path]
                    if f is None:
                        return None
                    data = f['data']
                    if path == b'.hgtags':
                        data = expand(data)
                    copy = f.get('copy')
                    return context.memfilectx(
                        repo,
                        mctx,
                        path,
                        data,
                        islink='l' in f.get('flags', ''),
                        isexec='x' in f.get('flags', ''),
                        copysource=copy.encode('utf-8') if copy else None,
                    )

                parents = [nodes[i] if i >= 0 else nodemod.nullid for i in c['parents']]
                while len(parents) < 2:
                    parents.append(nodemod.nullid)
                extra = {}
                if c.get('branch') and c['branch'] != 'default':
                    extra[b'branch'] = c['branch'].encode('utf-8')
                if c.get('close'):
                    extra[b'close'] = b'1'
                mctx = context.memctx(
                    repo,
                    parents,
                    c['desc'].encode('utf-8'),
                    sorted(files),
                    filectxfn,
                    user=c['user'].encode('utf-8'),
                    date=tuple(c['date']),
                    extra=extra,
                )
                nodes.append(mctx.commit())

            if plan.get('bookmarks'):
                changes = [
                    (name.encode('utf-8'), nodes[i])
                    for name, i in sorted(plan['bookmarks'].items())
                ]
                repo._bookmarks.applychanges(repo, tr, changes)
            if plan.get('public', -1) >= 0:
                phases.advanceboundary(repo, tr, phases.public, [nodes[plan['public']]])
            if plan.get('secret'):
                phases.retractboundary(
                    repo, tr, phases.secret, [nodes[i] for i in plan['secret']]
                )

        if plan.get('localtags'):
            with repo.vfs(b'localtags', b'ab') as f:
                for i, name in plan['localtags']:
                    f.write(b'%s %s\n' % (nodemod.hex(nodes[i]), name.encode('utf-8')))

        if plan.get('obsolete'):
            rels = []
            for prec, succ in plan['obsolete']:
                succs = (repo[nodes[succ]],) if succ >= 0 else ()
                rels.append(((repo[nodes[prec]],), succs))
            with repo.transaction(b'hgfsgen-obsolete'):
                obsolete.createmarkers(
                    repo, rels, date=(0, 0), metadata={b'user': b'test'}
                )

        if plan.get('update', -1) >= 0:
            hg.updaterepo(repo, nodes[plan['update']], overwrite=True)
