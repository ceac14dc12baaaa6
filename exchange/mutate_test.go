package exchange

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/revlog"
	"github.com/hgfs/hgfs/testenv"
)

// Structured mutations of the seed bundles, for TestUnbundleMutations.
// Each makes a variant of a real bundle from a seeded generator, so a
// failure names everything needed to make the same input again.

// outcome is what a mutation must lead to when the variant is applied to
// the repository its seed was cut against.
type outcome int

const (
	mayFail  outcome = iota // either; real hg is the oracle
	mustFail                // never a valid bundle
	mustApply
)

type mutation struct {
	name   string
	expect outcome
	// checkAll has real hg check every success, not a sample.
	checkAll bool
	// make returns the variant, or nil when the mutation does not apply
	// to this seed. raw is the seed file, m its decoded changegroup
	// (a copy the mutation may change).
	make func(rng *rand.Rand, raw []byte, m *cgModel) []byte
}

// testedFlags are the revision flags the flags mutation sets: each known
// flag, and one hg does not know.
var testedFlags = []uint16{revlog.FlagCensored, revlog.FlagEllipsis, revlog.FlagExtStored, revlog.FlagHasCopiesInfo, 1}

var mutations = []mutation{
	{"bitflip", mayFail, false, func(rng *rand.Rand, raw []byte, _ *cgModel) []byte {
		b := bytes.Clone(raw)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b))
			b[i] ^= 1 << rng.IntN(8)
		}
		return b
	}},
	{"truncate", mustFail, false, func(rng *rand.Rand, raw []byte, _ *cgModel) []byte {
		return bytes.Clone(raw[:rng.IntN(len(raw))])
	}},
	// Cut in its last bytes: the changegroups are applied, or nearly,
	// when the bundle is found short (the end of the file list, the end
	// of the bundle2 stream, a last part, a compressed stream's
	// checksum), so the rollback undoes the most.
	{"truncate-tail", mustFail, false, func(rng *rand.Rand, raw []byte, _ *cgModel) []byte {
		return bytes.Clone(raw[:len(raw)-1-rng.IntN(min(64, len(raw)))])
	}},
	// Two groups exchange their deltas (file groups keep their names):
	// the changelog's deltas in the manifest group, a file's revisions
	// in another file's revlog.
	{"swap-groups", mayFail, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		i, j := rng.IntN(len(m.groups)), rng.IntN(len(m.groups)-1)
		if j >= i {
			j++
		}
		m.groups[i].deltas, m.groups[j].deltas = m.groups[j].deltas, m.groups[i].deltas
		return nil
	}},
	// File groups in another order: hg takes them in any order.
	{"reorder-files", mustApply, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		files := m.groups[2:]
		rng.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
		return nil
	}},
	// A file group twice, the copy somewhere after the original: its
	// revisions are then all present (hg's addgroup skips them).
	{"duplicate-group", mustApply, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		if len(m.groups) < 3 {
			return nil
		}
		i := 2 + rng.IntN(len(m.groups)-2)
		at := i + 1 + rng.IntN(len(m.groups)-i)
		g := m.groups[i]
		m.groups = append(m.groups[:at], append([]cgGroup{g}, m.groups[at:]...)...)
		return nil
	}},
	// A delta repeated right after itself, in any group.
	{"duplicate-delta", mustApply, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		g := &m.groups[rng.IntN(len(m.groups))]
		if len(g.deltas) == 0 {
			return nil
		}
		i := rng.IntN(len(g.deltas))
		g.deltas = append(g.deltas[:i+1], g.deltas[i:]...)
		return nil
	}},
	// A revision flag on one delta (the changegroup becomes cg3).
	{"flags", mayFail, true, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		d := m.randomDelta(rng)
		m.version = changegroup.Version3
		d.Flags |= testedFlags[rng.IntN(len(testedFlags))]
		return nil
	}},
	{"unknown-base", mustFail, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		m.explicitBases()
		d := m.randomDelta(rng)
		d.Base = randomNode(rng)
		return nil
	}},
	{"unknown-parent", mustFail, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		d := m.randomDelta(rng)
		if rng.IntN(2) == 0 {
			d.P1 = randomNode(rng)
		} else {
			d.P2 = randomNode(rng)
		}
		return nil
	}},
	{"unknown-linknode", mustFail, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		g := m.groups[1+rng.IntN(len(m.groups)-1)] // the changelog's are not looked up
		if len(g.deltas) == 0 {
			return nil
		}
		g.deltas[rng.IntN(len(g.deltas))].LinkNode = randomNode(rng)
		return nil
	}},
	// A delta against another revision of its group than the one it was
	// made against (or the null revision).
	{"wrong-base", mayFail, false, func(rng *rand.Rand, _ []byte, m *cgModel) []byte {
		m.explicitBases()
		g := m.groups[rng.IntN(len(m.groups))]
		if len(g.deltas) < 2 {
			return nil
		}
		i := 1 + rng.IntN(len(g.deltas)-1)
		base := [20]byte{}
		if j := rng.IntN(i + 1); j < i {
			base = g.deltas[j].Node
		}
		if base == g.deltas[i].Base {
			return nil
		}
		g.deltas[i].Base = base
		return nil
	}},
}

func randomNode(rng *rand.Rand) (n [20]byte) {
	for i := range n {
		n[i] = byte(rng.Uint32())
	}
	return n
}

// randomDelta returns a delta of a random non-empty group.
func (m *cgModel) randomDelta(rng *rand.Rand) *changegroup.Delta {
	for {
		g := m.groups[rng.IntN(len(m.groups))]
		if len(g.deltas) > 0 {
			return &g.deltas[rng.IntN(len(g.deltas))]
		}
	}
}

// explicitBases makes a cg1 model cg2, so that delta bases can be set.
func (m *cgModel) explicitBases() {
	if m.version == changegroup.Version1 {
		m.version = changegroup.Version2
	}
}

// clone copies the model deeply enough for a mutation to change it.
func (m *cgModel) clone() *cgModel {
	c := *m
	c.groups = make([]cgGroup, len(m.groups))
	for i, g := range m.groups {
		c.groups[i] = cgGroup{name: g.name, deltas: append([]changegroup.Delta(nil), g.deltas...)}
	}
	return &c
}

// mutationRounds is how many variants each mutation makes of each seed,
// and how many of each mutation's successes and failures real hg checks:
// EXCHANGE_MUTATION_ROUNDS, 1 by default.
func mutationRounds(t *testing.T) (rounds, oracleBudget int) {
	s := os.Getenv("EXCHANGE_MUTATION_ROUNDS")
	if s == "" {
		return 1, 1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("EXCHANGE_MUTATION_ROUNDS=%q", s)
	}
	return n, n
}

// TestUnbundleMutations applies structured variants of every seed
// bundle (bit flips, truncation anywhere and near the end, groups
// exchanged, reordered or duplicated, revision flags, unknown bases,
// parents and linknodes, deltas against the wrong base) to the
// repository the seed was cut against, each filelog written when its
// group ends (so a failure comes after files changed on disk), and to a
// new empty one, filelogs batched, as hgfs unbundle does. Whatever the
// variant: no panic, and checkApplied's properties (no journal, no lock;
// a failure leaves every file as it was; every revision readable with
// its hash verified). A variant that cannot be valid must fail, and one
// that is valid must apply.
//
// Real hg checks a sample of each mutation's outcomes (as many as
// EXCHANGE_MUTATION_ROUNDS says, and every success of the flags
// mutation). After a success, hg verify accepts the repository, or real
// hg's unbundle of the same bytes leaves a repository hg verify rejects
// in the same words (hg does not check that the files a changeset names
// arrived). After a failure, hg verify accepts the repository left
// behind; where the variant may be valid, real hg refuses it too or
// applies it into a repository that hg verify or hgfs's reader rejects
// (hg stores a delta it reuses without building the text, so a corrupt
// one goes unchecked).
//
// The generator is seeded: a failure names the seed, mutation and round
// that make the input.
func TestUnbundleMutations(t *testing.T) {
	testenv.HgPath(t)
	rounds, budget := mutationRounds(t)
	hg := testenv.StartHgServer(t, t.TempDir())
	oracle := &hgOracle{t: t, hg: hg, dir: t.TempDir()}
	type tally struct{ applied, refused, successChecks, failureChecks int }
	stats := map[string]*tally{}
	for _, seed := range unbundleSeeds {
		raw := readSeed(t, seed.file)
		model := decodeBundle(t, raw)
		for _, mu := range mutations {
			st := stats[mu.name]
			if st == nil {
				st = &tally{}
				stats[mu.name] = st
			}
			for round := range rounds {
				h := fnv.New64a()
				fmt.Fprintf(h, "%s/%s", seed.file, mu.name)
				rng := rand.New(rand.NewPCG(h.Sum64(), uint64(round)))
				m := model.clone()
				data := mu.make(rng, raw, m)
				if data == nil {
					if m.equal(model) {
						continue // the mutation does not apply to this seed
					}
					data = m.encodeBundle(t)
				}
				for _, base := range []string{seed.base, ""} {
					where := fmt.Sprintf("%s %s round %d, on base %q", seed.file, mu.name, round, base)
					home := base == seed.base
					// File groups on four workers, whatever the
					// machine; on the empty base, one worker too,
					// which must end the same way.
					opt := Options{FileWorkers: 4}
					if home {
						opt.WriteBatch = -1
					}
					root, before := newRepo(t, base)
					err := unbundleBytes(root, data, opt)
					checkApplied(t, root, before, err)
					if !home || base == "" {
						root1, before1 := newRepo(t, base)
						err1 := unbundleBytes(root1, data, Options{FileWorkers: 1})
						checkApplied(t, root1, before1, err1)
						if fmt.Sprint(err) != fmt.Sprint(err1) {
							t.Errorf("%s: four file workers: %v; one: %v", where, err, err1)
						}
					}
					switch {
					case err == nil:
						st.applied++
						if mu.expect == mustFail {
							t.Errorf("%s: applied a bundle that cannot be valid", where)
						} else if mu.checkAll || st.successChecks < budget {
							st.successChecks++
							oracle.checkSuccess(where, root, base, data)
						}
					default:
						st.refused++
						if mu.expect == mustApply && home {
							t.Errorf("%s: %v", where, err)
						} else if home && st.failureChecks < budget {
							st.failureChecks++
							oracle.checkFailure(where, root, base, data, err, mu.expect == mayFail)
						}
					}
					if base == "" {
						break
					}
				}
			}
		}
	}
	for _, mu := range mutations {
		st := stats[mu.name]
		t.Logf("%-16s %3d applied, %3d refused; hg checked %d and %d", mu.name, st.applied, st.refused, st.successChecks, st.failureChecks)
	}
	t.Logf("hg verify runs: %d, hg unbundle runs: %d", oracle.verifies, oracle.unbundles)
}

// equal reports whether two models encode the same changegroup.
func (m *cgModel) equal(o *cgModel) bool {
	if m.version != o.version || len(m.groups) != len(o.groups) {
		return false
	}
	for i, g := range m.groups {
		og := o.groups[i]
		if g.name != og.name || len(g.deltas) != len(og.deltas) {
			return false
		}
		for j, d := range g.deltas {
			od := og.deltas[j]
			if d.Node != od.Node || d.P1 != od.P1 || d.P2 != od.P2 || d.Base != od.Base ||
				d.LinkNode != od.LinkNode || d.Flags != od.Flags || !bytes.Equal(d.Data, od.Data) {
				return false
			}
		}
	}
	return true
}

// hgOracle runs real hg on what hgfs did.
type hgOracle struct {
	t                   *testing.T
	hg                  *testenv.HgServer // for hg verify
	dir                 string
	n                   int
	verifies, unbundles int
}

// verify runs hg verify on root and returns its complaints ("" when it
// accepts the repository).
func (o *hgOracle) verify(root string) string {
	o.verifies++
	_, stderr, code := o.hg.Run(o.t, "-R", root, "verify", "-q")
	if code == 0 {
		return ""
	}
	return fmt.Sprintf("exit %d: %s", code, stderr)
}

// unbundle has real hg apply data to a new copy of base and returns the
// repository, or an error when hg refused the bundle.
func (o *hgOracle) unbundle(base string, data []byte) (root string, err error) {
	o.unbundles++
	o.n++
	dir := filepath.Join(o.dir, strconv.Itoa(o.n))
	root = filepath.Join(dir, "repo")
	baseSnapshot(o.t, base).restore(o.t, root)
	file := filepath.Join(dir, "bundle.hg")
	if err := os.WriteFile(file, data, 0o666); err != nil {
		o.t.Fatal(err)
	}
	// Not in the command server: hg 6.3 crashes on some corrupt deltas
	// ("mpatchError: invalid patch"), which would end the server. hg
	// aborts on an obsmarkers part unless markers are enabled (hgfs
	// skips the part).
	if _, stderr, err := testenv.HgResult(o.t, root, "--config", "experimental.evolution=all", "unbundle", "-q", file); err != nil {
		return "", fmt.Errorf("hg unbundle: %v: %s", err, lastLine(stderr))
	}
	return root, nil
}

// checkSuccess: hg verify accepts what hgfs applied, or hg applies the
// same bytes to the same effect (its verify says the same).
func (o *hgOracle) checkSuccess(where, root, base string, data []byte) {
	complaint := o.verify(root)
	if complaint == "" {
		return
	}
	hgRoot, err := o.unbundle(base, data)
	if err != nil {
		o.t.Errorf("%s: hgfs applied a bundle hg refuses (%v); hg verify: %s", where, err, complaint)
		return
	}
	if hgComplaint := o.verify(hgRoot); hgComplaint != complaint {
		o.t.Errorf("%s: hg verify after hgfs's unbundle:\n%s\nafter hg's:\n%s", where, complaint, hgComplaint)
	}
}

// checkFailure: hg verify accepts the repository a failed apply left,
// and, unless the variant cannot be valid (withHg false), real hg
// refuses the bundle too, or applies it into a repository that hg
// verify or hgfs's reader rejects.
func (o *hgOracle) checkFailure(where, root, base string, data []byte, applyErr error, withHg bool) {
	if c := o.verify(root); c != "" {
		o.t.Errorf("%s: after the failed apply (%v), hg verify: %s", where, applyErr, c)
	}
	if !withHg {
		return
	}
	hgRoot, err := o.unbundle(base, data)
	if err != nil {
		return
	}
	if o.verify(hgRoot) != "" || readAll(hgRoot) != nil {
		return
	}
	if emptyBaseDelta(applyErr) {
		return
	}
	o.t.Errorf("%s: hgfs refused a bundle hg applies cleanly: %v", where, applyErr)
}

// emptyBaseDelta reports whether err is the revlog writer refusing a
// delta against an empty text whose hunk claims bytes of it. hg takes
// such a delta (mdiff.patch skips the first hunk header of any delta
// against an empty text and keeps the rest as the text), hgfs refuses
// it; a delta hg writes against an empty text never has such a hunk.
func emptyBaseDelta(err error) bool {
	return errors.Is(err, revlog.ErrCorrupt) && strings.Contains(err.Error(), "past the end of its 0-byte base")
}

// lastLine is the last non-empty line of hg's error output.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// FuzzUnbundleMutations lets the coverage-guided fuzzer drive the
// structured mutations: its input picks a seed bundle, a mutation, the
// generator's state and the repository (the seed's base, filelogs
// written at each group's end, or an empty one); checkApplied's
// properties hold for the variant, and the mutation's expected outcome
// on the seed's base (real hg is left to TestUnbundleMutations).
func FuzzUnbundleMutations(f *testing.F) {
	testenv.HgPath(f)
	// One entry per mutation, each on another seed: the seed corpus
	// runs with the ordinary tests, and TestUnbundleMutations covers
	// every pair.
	for j := range mutations {
		f.Add(uint8(j%len(unbundleSeeds)), uint8(j), uint64(0), uint64(0), false)
	}
	models := map[int]*cgModel{}
	var mu sync.Mutex
	f.Fuzz(func(t *testing.T, seedIdx, mutIdx uint8, s1, s2 uint64, empty bool) {
		seed := unbundleSeeds[int(seedIdx)%len(unbundleSeeds)]
		mut := mutations[int(mutIdx)%len(mutations)]
		raw := readSeed(t, seed.file)
		mu.Lock()
		model := models[int(seedIdx)%len(unbundleSeeds)]
		if model == nil {
			model = decodeBundle(t, raw)
			models[int(seedIdx)%len(unbundleSeeds)] = model
		}
		mu.Unlock()
		m := model.clone()
		data := mut.make(rand.New(rand.NewPCG(s1, s2)), raw, m)
		if data == nil {
			data = m.encodeBundle(t)
		}
		base, opt := seed.base, Options{WriteBatch: -1}
		if empty {
			base, opt = "", Options{}
		}
		root, before := newRepo(t, base)
		err := unbundleBytes(root, data, opt)
		checkApplied(t, root, before, err)
		switch {
		case err == nil && mut.expect == mustFail:
			t.Errorf("%s: applied a bundle that cannot be valid", mut.name)
		case err != nil && mut.expect == mustApply && base == seed.base:
			t.Errorf("%s: %v", mut.name, err)
		}
	})
}
