# hgbench: the hg side of hgfs's "read all revisions" benchmark: read every
# revision of one filelog through the ordinary storage API (rawdata checks
# each hash) and print the same summary line as the hgfs side.
from mercurial import registrar

cmdtable = {}
command = registrar.command(cmdtable)


@command(b'benchrevisions', [], b'FILE')
def benchrevisions(ui, repo, path):
    fl = repo.file(path)
    total = 0
    for rev in fl:
        total += len(fl.rawdata(fl.node(rev)))
    ui.write(b'%d revisions, %d bytes\n' % (len(fl), total))


@command(b'benchcommits', [], b'COUNT')
def benchcommits(ui, repo, count):
    """Add COUNT linear commits on top of tip without a working copy, each
    appending a line to three files chosen by the commit's revision number
    (deterministic: the same repository gets the same commits)."""
    from mercurial import context

    with repo.wlock(), repo.lock():
        parent = repo[b'tip']
        files = sorted(parent.manifest())
        for _ in range(int(count)):
            rev = len(repo)
            chosen = sorted(
                {files[(rev * 7919 + k * 104729) % len(files)] for k in range(3)}
            )

            def filectxfn(repo, memctx, path, parent=parent, rev=rev):
                data = parent[path].data() + b'bench commit %d\n' % rev
                return context.memfilectx(repo, memctx, path, data)

            ctx = context.memctx(
                repo,
                (parent.node(), None),
                b'bench commit %d' % rev,
                chosen,
                filectxfn,
                user=b'bench',
                date=(1700000000 + rev, 0),
            )
            parent = repo[ctx.commit()]
    ui.write(b'%d\n' % len(repo))
