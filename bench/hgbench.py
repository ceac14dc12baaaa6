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
