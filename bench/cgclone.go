//go:build linux

package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Changegroup clones (issue 19): `hgfs clone -U URL` against `hg clone -U
// URL`, both from one `hg serve` started for the case, without --stream:
// hg's default for a network clone, a pull into an empty repository. On
// two stores: "many files" (make bench's large repository) and "real
// history" (the corpus bundle unbundled by hg). Goal: 0.3x hg's time.
// A third case pulls with nothing to pull, hgfs pull against hg pull
// (no goal: what the protocol's requests cost, each after the first on
// a kept-alive connection).
//
// The floor: hg serve's changegroup for the same clone (the getbundle
// request, to curl writing to /dev/null), against hg clone. hg serve
// builds the changegroup as it sends it, so no client finishes before the
// server has sent it; a floor ratio above the goal puts the goal out of
// any client's reach.
func init() {
	for _, k := range historyStores {
		registerCgClone(k)
	}
}

func registerCgClone(k storeKind) {
	sfx := " (" + k.label + ")"
	type state struct {
		lifecycle
		env        *Env
		repo       string
		srv        *hgServe
		work       string
		run        int
		hgfs, peer string
		verified   bool
	}
	setup := func(st *state) func(ctx context.Context, env *Env) (any, error) {
		return func(ctx context.Context, env *Env) (any, error) {
			st.begin()
			st.env, st.verified = env, false
			st.syscalls = env.Strace != ""
			var err error
			if st.repo, err = k.repo(ctx, env); err != nil {
				return nil, err
			}
			if st.work, err = st.scratch(env, "cgclone"); err != nil {
				return nil, err
			}
			st.run = 0
			if st.srv, err = startHgServe(env, st.repo); err != nil {
				return nil, err
			}
			st.onFinish(st.srv.stop)
			return st, nil
		}
	}
	// fresh names a new destination per run; earlier ones stay until the
	// bench ends (see trash.go), and the sync keeps their writeback out of
	// the timed run.
	fresh := func(st *state, side string) (string, error) {
		st.run++
		return filepath.Join(st.work, fmt.Sprintf("%s-%d", side, st.run)), exec.Command("sync").Run()
	}
	hgClone := func(st *state) func(env *Env, _ any) *exec.Cmd {
		return func(env *Env, _ any) *exec.Cmd {
			var err error
			if st.peer, err = fresh(st, "peer"); err != nil {
				return failCmd(err)
			}
			return hgCmd(env, "clone", "-q", "-U", st.srv.url, st.peer)
		}
	}
	{
		st := &state{}
		register(&Case{Name: "clone (changegroup) from hg serve vs hg clone" + sfx, Goal: 0.3, Syscalls: true,
			Setup: setup(st),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				var err error
				if st.hgfs, err = fresh(st, "hgfs"); err != nil {
					return failCmd(err)
				}
				return hgfsCmd(env, "clone", "-q", "-U", st.srv.url, st.hgfs)
			},
			Peer: hgClone(st),
			Check: st.check(func(_, _ []byte) error {
				return sameHistory(st.env, st.hgfs, st.peer, &st.verified)
			})})
	}
	{
		st := &state{}
		register(&Case{Name: "floor: hg serve's changegroup to curl vs hg clone" + sfx, Setup: setup(st),
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				heads, err := exec.Command(env.Hg, "-R", st.repo, "heads", "-T", "{node} ").Output()
				if err != nil {
					return failCmd(fmt.Errorf("hg heads: %w", err))
				}
				return curlCmd(st.srv.cmd.Process.Pid, st.srv.url+"?cmd=getbundle", changegroupHeaders(nullHex, strings.TrimSpace(string(heads))))
			},
			Peer: hgClone(st)})
	}
	// A pull with nothing to pull, from the same hg serve: the wire
	// protocol's requests and answers alone (capabilities, heads,
	// listkeys), what each request costs a client on a kept-alive
	// connection (wireproto/quickack.go). Each side pulls into a clone
	// of its own, made once before the first run; both must still hold
	// the server's history after each pull.
	{
		st := &state{}
		dests := map[string]string{}
		dest := func(env *Env, side string) (string, error) {
			if d, ok := dests[side]; ok {
				return d, exec.Command("sync").Run()
			}
			d := filepath.Join(st.work, "pull-"+side)
			if err := runQuiet(hgCmd(env, "clone", "-q", "-U", st.repo, d), env); err != nil {
				return "", err
			}
			dests[side] = d
			return d, exec.Command("sync").Run()
		}
		register(&Case{Name: "pull with nothing to pull from hg serve vs hg pull" + sfx,
			Setup: func(ctx context.Context, env *Env) (any, error) {
				clear(dests)
				return setup(st)(ctx, env)
			},
			Hgfs: func(env *Env, _ any) *exec.Cmd {
				d, err := dest(env, "hgfs")
				if err != nil {
					return failCmd(err)
				}
				st.hgfs = d
				return hgfsCmd(env, "-R", d, "pull", "-q", st.srv.url)
			},
			Peer: func(env *Env, _ any) *exec.Cmd {
				d, err := dest(env, "peer")
				if err != nil {
					return failCmd(err)
				}
				st.peer = d
				return hgCmd(env, "-R", d, "pull", "-q", st.srv.url)
			},
			Check: st.check(func(_, _ []byte) error {
				return sameHistory(st.env, st.hgfs, st.peer, &st.verified)
			})})
	}
}

// nullHex is the null revision's node.
const nullHex = "0000000000000000000000000000000000000000"

// changegroupHeaders are the getbundle arguments of hg 6.3's `hg clone -U`
// without --stream (common = nullHex: a changegroup of everything) or
// of its pull (common = what the client has), with phase heads and
// bookmarks parts, in one X-HgArg header. common and heads are nodes
// separated by spaces.
func changegroupHeaders(common, heads string) []string {
	caps := "HG20%2Cbundle2%3DHG20%250Abookmarks%250Achangegroup%253D01%252C02%250Adigests%253Dmd5%252Csha1%252Csha512" +
		"%250Aerror%253Dabort%252Cunsupportedcontent%252Cpushraced%252Cpushkey%250Ahgtagsfnodes%250Alistkeys" +
		"%250Aphases%253Dheads%250Apushkey%250Aremote-changegroup%253Dhttp%252Chttps%250Astream%253Dv2"
	args := "bookmarks=1&bundlecaps=" + caps + "&cg=1&common=" +
		strings.ReplaceAll(common, " ", "+") + "&heads=" +
		strings.ReplaceAll(heads, " ", "+") + "&listkeys=bookmarks&phases=1"
	return []string{"X-HgArg-1: " + args, "X-HgProto-1: 0.1 0.2 comp=zstd,zlib,none"}
}
