package store

import (
	"bytes"
	"slices"
	"testing"
)

func TestRelevantMarkers(t *testing.T) {
	n := func(c byte) []byte { return bytes.Repeat([]byte{c}, 20) }
	all := []ObsMarker{
		{Prec: n('x'), Succs: [][]byte{n('y')}},                                              // unrelated
		{Prec: n('a'), Succs: [][]byte{n('b')}},                                              // b's predecessor
		{Prec: n('c'), Parents: [][]byte{n('b')}, HasParents: true},                          // prune of b's child
		{Prec: n('d'), Succs: [][]byte{n('a')}},                                              // a's predecessor: recursive
		{Prec: n('a'), Succs: [][]byte{n('b')}},                                              // equal to the second: once
		{Prec: n('e'), Succs: [][]byte{n('c')}, Parents: [][]byte{n('b')}, HasParents: true}, // c's predecessor, found through c
	}
	got := RelevantMarkers(all, [][]byte{n('b')})
	var precs []byte
	for _, m := range got {
		precs = append(precs, m.Prec[0])
	}
	if string(precs) != "acde" {
		t.Errorf("relevant markers of b: precursors %q, want \"acde\"", precs)
	}
	SortMarkers(got)
	precs = precs[:0]
	for _, m := range got {
		precs = append(precs, m.Prec[0])
	}
	if string(precs) != "acde" {
		t.Errorf("sorted: %q", precs)
	}
	// Sorting compares the whole tuple: successors, then flags, then
	// metadata, date and parents.
	ms := []ObsMarker{
		{Prec: n('a'), Succs: [][]byte{n('b')}, Date: 2},
		{Prec: n('a'), Succs: [][]byte{n('b')}, Flags: 1},
		{Prec: n('a'), Succs: [][]byte{n('b')}, Meta: [][2]string{{"user", "z"}}},
		{Prec: n('a')},
		{Prec: n('a'), Succs: [][]byte{n('b')}, Date: 1},
	}
	SortMarkers(ms)
	var order []string
	for _, m := range ms {
		order = append(order, string(rune('0'+len(m.Succs)))+string(rune('0'+m.Flags))+string(rune('0'+len(m.Meta)))+string(rune('0'+int(m.Date))))
	}
	if got, want := order, []string{"0000", "1001", "1002", "1010", "1100"}; !slices.Equal(got, want) {
		t.Errorf("sorted: %v, want %v", got, want)
	}
}
