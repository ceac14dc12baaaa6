package profiling

// The profiles runtime/pprof writes (profile.proto, gzipped), read with
// protowire for the fields format.go and peak.go use. The reader was
// github.com/google/pprof/profile's, but every hgfs process paid for its
// package initializers (regexps for pprof's legacy text formats), used
// or not: 4.8% of the samples of `hgfs update` at tip on a mount, the
// largest left once the S3 client had moved to its helper. The tests
// hold this reader to that one.

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
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

// pprofField is one top-level field: its number and encoding, and for a
// sample its index in samples.
type pprofField struct {
	num    protowire.Number
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
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return nil, pprofErr(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, data[n:])
		if m < 0 {
			return nil, pprofErr(m)
		}
		f := pprofField{num: num, raw: data[:n+m], sample: -1}
		val := data[n : n+m]
		data = data[n+m:]
		if typ == protowire.BytesType {
			b, _ := protowire.ConsumeBytes(val)
			var err error
			switch num {
			case profileSampleType:
				var t [2]int64
				err = eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
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
				err = eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
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
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch num {
		case locationID:
			var err error
			id, err = varint(typ, v)
			return err
		case locationLine:
			if typ != protowire.BytesType {
				return errors.New("profile: a line is not a message")
			}
			lb, _ := protowire.ConsumeBytes(v)
			var fn uint64
			err := eachField(lb, func(num protowire.Number, typ protowire.Type, v []byte) error {
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
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
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

// eachField calls f with each field of the message b: its number, type
// and encoded value.
func eachField(b []byte, f func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return pprofErr(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return pprofErr(m)
		}
		if err := f(num, typ, b[n:n+m]); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// varint is a varint field's value.
func varint(typ protowire.Type, v []byte) (uint64, error) {
	if typ != protowire.VarintType {
		return 0, fmt.Errorf("profile: a field of type %d where a varint belongs", typ)
	}
	x, _ := protowire.ConsumeVarint(v)
	return x, nil
}

// repeated calls f with each value of a repeated varint field, packed
// or not.
func repeated(typ protowire.Type, v []byte, f func(uint64)) error {
	if typ != protowire.BytesType {
		x, err := varint(typ, v)
		if err == nil {
			f(x)
		}
		return err
	}
	b, _ := protowire.ConsumeBytes(v)
	for len(b) > 0 {
		x, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return pprofErr(n)
		}
		f(x)
		b = b[n:]
	}
	return nil
}

func pprofErr(n int) error { return fmt.Errorf("profile: %w", protowire.ParseError(n)) }

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
