//go:build linux

package mount

import (
	"encoding/binary"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/hgfs/hgfs/fsnode"
)

// FuzzRawRequests feeds the adapter arbitrary sequences of FUSE requests
// (untrusted: any node ID, handle, name, offset, flag) without a kernel in
// between. Nothing may panic, every reply must be OK or an errno, replies
// carrying a node ID must describe that node, and the cache must pass
// fsck afterwards.
func FuzzRawRequests(f *testing.F) {
	f.Add([]byte("\x03\x00a\x00\x05\x01b\x00\x00\x00\x0a"))
	f.Add([]byte("\x04\x00file\x00\x06\x02\x00hello\x00\x07\x02\x00\x00\x0e\x00\x00\x0b\x00file\x00"))
	f.Add([]byte("\x03\x00d\x00\x04\x02x\x00\x0c\x00d\x00\x0d\x00\x00\x00\x00\x09\x00y\x00\x02\x02\x00\x00"))
	f.Add([]byte("\x01\x00.hgfs\x00\x04\x00.hgfs\x00\x0e\x80\x00"))
	f.Fuzz(func(t *testing.T, prog []byte) {
		dir := t.TempDir()
		// NoSync: this is about handling requests, not durability, and
		// fsyncs on a busy disk would dominate.
		fsys, err := fsnode.Create(dir, fsnode.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		r := newRawFS(fsys, func() any { return map[string]int{"x": 1} })
		runProgram(t, r, prog)
		if err := fsys.Close(); err != nil {
			t.Fatalf("close after requests: %v", err)
		}
		checkFsck(t, dir)
	})
}

// runProgram interprets prog as requests: an opcode byte, a node selector
// byte (an index into the node IDs replies have handed out, or with the
// top bit set a raw ID), a NUL-terminated name, then op-specific bytes.
func runProgram(t *testing.T, r *rawFS, prog []byte) {
	nodes := []uint64{fuse.FUSE_ROOT_ID}
	fhs := []uint64{0}
	next := func(n int) []byte {
		if n > len(prog) {
			n = len(prog)
		}
		b := prog[:n]
		prog = prog[n:]
		return b
	}
	byte1 := func() byte {
		if b := next(1); len(b) == 1 {
			return b[0]
		}
		return 0
	}
	node := func() uint64 {
		s := byte1()
		if s&0x80 != 0 {
			return uint64(s&0x7f) | uint64(s&0x40)<<57 // small IDs and virtual ones
		}
		return nodes[int(s)%len(nodes)]
	}
	name := func() string {
		for i, c := range prog {
			if c == 0 {
				s := string(prog[:i])
				prog = prog[i+1:]
				return s
			}
		}
		s := string(prog)
		prog = nil
		return s
	}
	fh := func() uint64 { return fhs[int(byte1())%len(fhs)] }
	check := func(op string, st fuse.Status) {
		if st < 0 {
			t.Fatalf("%s: negative status %d", op, st)
		}
	}
	entry := func(op string, st fuse.Status, out *fuse.EntryOut) {
		check(op, st)
		if st == fuse.OK && out.NodeId != 0 {
			if out.Attr.Ino != out.NodeId {
				t.Fatalf("%s: node %d has attr ino %d", op, out.NodeId, out.Attr.Ino)
			}
			nodes = append(nodes, out.NodeId)
		}
	}
	hdr := func(id uint64) fuse.InHeader { return fuse.InHeader{NodeId: id} }
	buf := make([]byte, 1<<16)
	for steps := 0; len(prog) > 0 && steps < 200; steps++ {
		op := byte1() % 20
		id := node()
		switch op {
		case 0:
			var out fuse.AttrOut
			check("getattr", r.GetAttr(nil, &fuse.GetAttrIn{InHeader: hdr(id)}, &out))
		case 1:
			var out fuse.EntryOut
			entry("lookup", r.Lookup(nil, &fuse.InHeader{NodeId: id}, name(), &out), &out)
		case 2:
			r.Forget(id, uint64(byte1()))
		case 3:
			var out fuse.EntryOut
			entry("mkdir", r.Mkdir(nil, &fuse.MkdirIn{InHeader: hdr(id), Mode: 0o755}, name(), &out), &out)
		case 4:
			var out fuse.CreateOut
			in := &fuse.CreateIn{InHeader: hdr(id), Flags: uint32(byte1()) << 4, Mode: 0o644}
			st := r.Create(nil, in, name(), &out)
			entry("create", st, &out.EntryOut)
			if st == fuse.OK {
				fhs = append(fhs, out.Fh)
			}
		case 5:
			var out fuse.OpenOut
			st := r.Open(nil, &fuse.OpenIn{InHeader: hdr(id), Flags: uint32(byte1() % 3)}, &out)
			check("open", st)
			if st == fuse.OK {
				fhs = append(fhs, out.Fh)
			}
		case 6:
			data := next(int(byte1()))
			off := uint64(byte1()) << (byte1() % 40)
			_, st := r.Write(nil, &fuse.WriteIn{InHeader: hdr(id), Fh: fh(), Offset: off, Size: uint32(len(data))}, data)
			check("write", st)
		case 7:
			off := uint64(byte1()) << (byte1() % 64)
			res, st := r.Read(nil, &fuse.ReadIn{InHeader: hdr(id), Fh: fh(), Offset: off, Size: uint32(len(buf))}, buf)
			check("read", st)
			if st == fuse.OK {
				res.Bytes(buf)
				res.Done()
			}
		case 8:
			check("unlink", r.Unlink(nil, &fuse.InHeader{NodeId: id}, name()))
		case 9:
			check("rmdir", r.Rmdir(nil, &fuse.InHeader{NodeId: id}, name()))
		case 10:
			in := &fuse.RenameIn{InHeader: hdr(id), Newdir: node(), Flags: uint32(byte1() % 5)}
			check("rename", r.Rename(nil, in, name(), name()))
		case 11:
			var out fuse.EntryOut
			entry("link", r.Link(nil, &fuse.LinkIn{InHeader: hdr(node()), Oldnodeid: id}, name(), &out), &out)
		case 12:
			var out fuse.EntryOut
			h := fuse.InHeader{NodeId: id}
			entry("symlink", r.Symlink(nil, &h, name(), name(), &out), &out)
		case 13:
			_, st := r.Readlink(nil, &fuse.InHeader{NodeId: id})
			check("readlink", st)
		case 14:
			off := uint64(byte1())
			if byte1()&1 == 0 {
				check("readdir", r.ReadDir(nil, &fuse.ReadIn{InHeader: hdr(id), Offset: off}, fuse.NewDirEntryList(make([]byte, 512), off)))
			} else {
				list := fuse.NewDirEntryList(make([]byte, 4096), off)
				check("readdirplus", r.ReadDirPlus(nil, &fuse.ReadIn{InHeader: hdr(id), Offset: off}, list))
				_, outs, err := fuse.ParseDirLookupEntries(list.Bytes())
				if err != nil {
					t.Fatalf("readdirplus reply: %v", err)
				}
				for _, o := range outs {
					if o.NodeId != 0 {
						nodes = append(nodes, o.NodeId)
					}
				}
			}
		case 15:
			r.Release(nil, &fuse.ReleaseIn{InHeader: hdr(id), Fh: fh()})
		case 16:
			in := &fuse.SetAttrIn{}
			in.NodeId = id
			in.Valid = uint32(binary.LittleEndian.Uint16(append(next(2), 0, 0)))
			in.Size = uint64(byte1()) << (byte1() % 40)
			in.Mode = uint32(byte1()) << 4
			in.Atime, in.Mtime = uint64(byte1())<<30, uint64(byte1())
			in.Atimensec, in.Mtimensec = uint32(byte1())<<24, uint32(byte1())<<24
			var out fuse.AttrOut
			check("setattr", r.SetAttr(nil, in, &out))
		case 17:
			check("flush", r.Flush(nil, &fuse.FlushIn{InHeader: hdr(id), Fh: fh()}))
		case 18:
			check("fsync", r.Fsync(nil, &fuse.FsyncIn{InHeader: hdr(id), Fh: fh()}))
		case 19:
			var out fuse.StatfsOut
			check("statfs", r.StatFs(nil, &fuse.InHeader{NodeId: id}, &out))
			var oo fuse.OpenOut
			check("opendir", r.OpenDir(nil, &fuse.OpenIn{InHeader: hdr(id), Flags: syscall.O_RDONLY}, &oo))
		}
	}
}
