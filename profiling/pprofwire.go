package profiling

// The profiles runtime/pprof writes (profile.proto, gzipped), read for
// the fields format.go and peak.go use. The reader was
// github.com/google/pprof/profile's, but every hgfs process paid for its
// package initializers (regexps for pprof's legacy text formats), used
// or not: the largest left once the S3 client had moved to its helper
// (0.8 ms of CPU in each `hgfs update` at tip on a mount, by perf).
// protobuf's protowire was no better a base: its package's initializers
// read eight pieces of the running executable (internal/detrand), 0.2 ms
// by perf. The wire format profile.proto uses is a few lines on
// encoding/binary's varints (wire below). The tests hold this reader to
// google/pprof's.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// profile.proto's field numbers, of the messages read here.
const (
	profileSampleType  = 1
	profileSample      = 2
	profileLocation    = 4
	profileFunction    = 5
	profileStringTable = 6

	valueTypeType = 1
	valueTypeUnit = 2

	sampleLocationID = 1
	sampleValue      = 2

	locationID   = 1
	locationLine = 4

	lineFunctionID = 1

	functionID        = 1
	functionName      = 2
	functionFilename  = 4
	functionStartLine = 5
)

// maxProfile bounds a profile's decompressed size.
const maxProfile = 1 << 30

// pprofProfile is a decoded profile.
type pprofProfile struct {
	sampleTypes []valueType
	samples     []pprofSample
	// locations maps a location's id to the functions of its lines,
	// innermost first (the last is the caller the others were inlined
	// into), 0 where a line names none.
	locations map[uint64][]uint64
	functions map[uint64]*pprofFunction
	// fields are the message's top-level fields as encoded, in order,
	// for rewriting it (drop).
	fields []pprofField
}

type valueType struct{ typ, unit string }

type pprofSample struct {
	locations []uint64 // leaf first
	values    []int64
}

type pprofFunction struct {
	id             uint64
	name, filename string
	startLine      int64
	nameIx, fileIx int64
}

// pprofField is one top-level field: its encoding, and for a sample its
// index in samples.
type pprofField struct {
	raw    []byte
	sample int
}

// parsePprof decodes a profile, gzipped or not.
func parsePprof(data []byte) (*pprofProfile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, maxProfile+1)); err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		if len(data) > maxProfile {
			return nil, errors.New("profile: larger than 1 GiB")
		}
	}
	p := &pprofProfile{locations: map[uint64][]uint64{}, functions: map[uint64]*pprofFunction{}}
	var strs []string
	var typeIx [][2]int64
	for len(data) > 0 {
		num, typ, b, rest, err := nextField(data)
		if err != nil {
			return nil, err
		}
		f := pprofField{raw: data[:len(data)-len(rest)], sample: -1}
		data = rest
		if typ == wireBytes {
			switch num {
			case profileSampleType:
				var t [2]int64
				err = eachField(b, func(num uint64, typ wireType, v []byte) error {
					if num == valueTypeType || num == valueTypeUnit {
						x, err := varint(typ, v)
						t[num-valueTypeType] = int64(x)
						return err
					}
					return nil
				})
				typeIx = append(typeIx, t)
			case profileSample:
				var s pprofSample
				err = eachField(b, func(num uint64, typ wireType, v []byte) error {
					switch num {
					case sampleLocationID:
						return repeated(typ, v, func(x uint64) { s.locations = append(s.locations, x) })
					case sampleValue:
						return repeated(typ, v, func(x uint64) { s.values = append(s.values, int64(x)) })
					}
					return nil
				})
				f.sample = len(p.samples)
				p.samples = append(p.samples, s)
			case profileLocation:
				err = p.location(b)
			case profileFunction:
				err = p.function(b)
			case profileStringTable:
				strs = append(strs, string(b))
			}
			if err != nil {
				return nil, err
			}
		}
		p.fields = append(p.fields, f)
	}
	str := func(i int64) (string, error) {
		if i < 0 || i >= int64(len(strs)) {
			return "", fmt.Errorf("profile: string %d of %d", i, len(strs))
		}
		return strs[i], nil
	}
	for _, t := range typeIx {
		typ, err := str(t[0])
		if err != nil {
			return nil, err
		}
		unit, err := str(t[1])
		if err != nil {
			return nil, err
		}
		p.sampleTypes = append(p.sampleTypes, valueType{typ, unit})
	}
	for _, fn := range p.functions {
		var err error
		if fn.name, err = str(fn.nameIx); err != nil {
			return nil, err
		}
		if fn.filename, err = str(fn.fileIx); err != nil {
			return nil, err
		}
	}
	for _, fns := range p.locations {
		for _, id := range fns {
			if id != 0 && p.functions[id] == nil {
				return nil, fmt.Errorf("profile: function id %d not found", id)
			}
		}
	}
	for _, s := range p.samples {
		if len(s.values) != len(p.sampleTypes) {
			return nil, fmt.Errorf("profile: a sample has %d values for %d types", len(s.values), len(p.sampleTypes))
		}
		for _, id := range s.locations {
			if _, ok := p.locations[id]; !ok {
				return nil, fmt.Errorf("profile: location id %d not found", id)
			}
		}
	}
	if len(p.sampleTypes) == 0 {
		return nil, errors.New("profile: no sample types")
	}
	return p, nil
}

func (p *pprofProfile) location(b []byte) error {
	var id uint64
	var fns []uint64
	err := eachField(b, func(num uint64, typ wireType, v []byte) error {
		switch num {
		case locationID:
			var err error
			id, err = varint(typ, v)
			return err
		case locationLine:
			if typ != wireBytes {
				return errors.New("profile: a line is not a message")
			}
			var fn uint64
			err := eachField(v, func(num uint64, typ wireType, v []byte) error {
				if num == lineFunctionID {
					var err error
					fn, err = varint(typ, v)
					return err
				}
				return nil
			})
			fns = append(fns, fn)
			return err
		}
		return nil
	})
	if err == nil && id == 0 {
		err = errors.New("profile: a location without an id")
	}
	p.locations[id] = fns
	return err
}

func (p *pprofProfile) function(b []byte) error {
	fn := &pprofFunction{}
	err := eachField(b, func(num uint64, typ wireType, v []byte) error {
		var dst *int64
		switch num {
		case functionID:
			var err error
			fn.id, err = varint(typ, v)
			return err
		case functionName:
			dst = &fn.nameIx
		case functionFilename:
			dst = &fn.fileIx
		case functionStartLine:
			dst = &fn.startLine
		default:
			return nil
		}
		x, err := varint(typ, v)
		*dst = int64(x)
		return err
	})
	if err == nil && fn.id == 0 {
		err = errors.New("profile: a function without an id")
	}
	p.functions[fn.id] = fn
	return err
}

// wireType is a protobuf field's wire type.
type wireType byte

const (
	wireVarint  wireType = 0
	wireFixed64 wireType = 1
	wireBytes   wireType = 2
	wireFixed32 wireType = 5
)

var errWire = errors.New("profile: malformed protobuf")

// nextField cuts the first field off b: its number, its wire type, its
// value (a varint's bytes, a length-delimited field's contents, a fixed
// field's bytes), and what follows it.
func nextField(b []byte) (num uint64, typ wireType, val, rest []byte, err error) {
	tag, n := binary.Uvarint(b)
	if n <= 0 || tag>>3 == 0 {
		return 0, 0, nil, nil, errWire
	}
	num, typ, b = tag>>3, wireType(tag&7), b[n:]
	size := 0
	switch typ {
	case wireVarint:
		if _, size = binary.Uvarint(b); size <= 0 {
			return 0, 0, nil, nil, errWire
		}
	case wireFixed64:
		size = 8
	case wireFixed32:
		size = 4
	case wireBytes:
		l, m := binary.Uvarint(b)
		if m <= 0 || l > uint64(len(b)-m) {
			return 0, 0, nil, nil, errWire
		}
		return num, typ, b[m : m+int(l)], b[m+int(l):], nil
	default: // groups: profile.proto has none
		return 0, 0, nil, nil, fmt.Errorf("profile: wire type %d", typ)
	}
	if size > len(b) {
		return 0, 0, nil, nil, errWire
	}
	return num, typ, b[:size], b[size:], nil
}

// eachField calls f with each field of the message b: its number, type
// and value.
func eachField(b []byte, f func(num uint64, typ wireType, val []byte) error) error {
	for len(b) > 0 {
		num, typ, val, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if err := f(num, typ, val); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// varint is a varint field's value.
func varint(typ wireType, v []byte) (uint64, error) {
	if typ != wireVarint {
		return 0, fmt.Errorf("profile: a field of wire type %d where a varint belongs", typ)
	}
	x, _ := binary.Uvarint(v)
	return x, nil
}

// repeated calls f with each value of a repeated varint field, packed
// or not.
func repeated(typ wireType, v []byte, f func(uint64)) error {
	if typ != wireBytes {
		x, err := varint(typ, v)
		if err == nil {
			f(x)
		}
		return err
	}
	for len(v) > 0 {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			return errWire
		}
		f(x)
		v = v[n:]
	}
	return nil
}

// lines calls f with each function (non-zero id) of the sample's stack,
// leaf first, with the indices of its location and of its line there.
func (p *pprofProfile) lines(s pprofSample, f func(fn *pprofFunction, li, lj int)) {
	for li, loc := range s.locations {
		for lj, id := range p.locations[loc] {
			if id != 0 {
				f(p.functions[id], li, lj)
			}
		}
	}
}

// write writes the profile, gzipped, less the samples drop says to.
func (p *pprofProfile) write(w io.Writer, drop func(pprofSample) bool) error {
	zw := gzip.NewWriter(w)
	for _, f := range p.fields {
		if f.sample >= 0 && drop(p.samples[f.sample]) {
			continue
		}
		if _, err := zw.Write(f.raw); err != nil {
			return err
		}
	}
	return zw.Close()
}
