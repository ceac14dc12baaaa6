package bundle2

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// rawPart builds a part header block (with its size prefix), the type
// as it is, valid or not.
func rawPart(typ string, id uint32, man, adv []Param) []byte {
	h, err := appendPartHeader(nil, typ, id, man, adv)
	if err != nil {
		panic(err)
	}
	return append(be32(int32(len(h))), h...)
}

func readAllParts(t testing.TB, data []byte) ([]*Part, [][]byte, error) {
	br, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	defer br.Close()
	var parts []*Part
	var payloads [][]byte
	for {
		p, err := br.NextPart()
		if err == io.EOF {
			return parts, payloads, nil
		}
		if err != nil {
			return parts, payloads, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return parts, payloads, err
		}
		parts = append(parts, p)
		payloads = append(payloads, b)
	}
}

func TestBundle2RoundTrip(t *testing.T) {
	var buf bytes.Buffer
	bw, err := NewWriter(&buf, Param{"someparam", "a b,c"})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789"), 7000) // 70000 bytes: 3 chunks
	bw.WritePart("stream2", true, []Param{{"k", "v"}}, []Param{{"adv", ""}}, big)
	bw.WritePart("output", false, nil, nil, nil)
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if !bytes.HasPrefix(data, []byte("HG20\x00\x00\x00\x13someparam=a%20b%2Cc")) {
		t.Fatalf("header %q", data[:40])
	}
	// hg's chunking: 32768, 32768, 4464, then 0.
	if i := bytes.Index(data, []byte("0123456789")); !bytes.Equal(data[i-4:i], be32(PayloadChunkSize)) {
		t.Errorf("first chunk size %x", data[i-4:i])
	}
	parts, payloads, err := readAllParts(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Type != "stream2" || !parts[0].Mandatory || parts[0].ID != 0 ||
		parts[1].Type != "output" || parts[1].Mandatory || parts[1].ID != 1 {
		t.Fatalf("parts %+v %+v", parts[0], parts[1])
	}
	if v, _ := parts[0].Param("k"); v != "v" {
		t.Errorf("param k = %q", v)
	}
	if _, ok := parts[0].Param("adv"); !ok {
		t.Error("advisory param missing")
	}
	if !bytes.Equal(payloads[0], big) || len(payloads[1]) != 0 {
		t.Errorf("payloads %d %d", len(payloads[0]), len(payloads[1]))
	}
}

func TestBundle2Interrupt(t *testing.T) {
	body := rawPart("OUTPUT", 0, nil, nil)
	body = append(body, be32(3)...)
	body = append(body, "abc"...)
	// Interruption carrying an advisory part, then the payload resumes.
	body = append(body, be32(-1)...)
	body = append(body, rawPart("output", 1, nil, nil)...)
	body = append(body, be32(2)...)
	body = append(body, "zz"...)
	body = append(body, be32(0)...)
	body = append(body, be32(3)...)
	body = append(body, "def"...)
	// An interruption with no part (header size 0).
	body = append(body, be32(-1)...)
	body = append(body, be32(0)...)
	body = append(body, be32(0)...)
	body = append(body, be32(0)...)
	data := append([]byte("HG20\x00\x00\x00\x00"), body...)
	_, payloads, err := readAllParts(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if string(payloads[0]) != "abcdef" {
		t.Fatalf("payload %q", payloads[0])
	}

	// An error:abort in an interruption (how hg reports a failure while
	// generating a part) fails the read.
	body = rawPart("STREAM2", 0, nil, nil)
	body = append(body, be32(-1)...)
	body = append(body, rawPart("error:abort", 0, []Param{{"message", "unexpected error: boom"}}, nil)...)
	body = append(body, be32(0)...)
	body = append(body, be32(0)...)
	body = append(body, be32(0)...)
	_, _, err = readAllParts(t, append([]byte("HG20\x00\x00\x00\x00"), body...))
	var re *RemoteError
	if !errors.As(err, &re) || re.Message != "unexpected error: boom" || !errors.Is(err, ErrRemote) {
		t.Fatalf("got %v", err)
	}
}

func TestBundle2Malformed(t *testing.T) {
	hdr := "HG20\x00\x00\x00\x00"
	for _, tc := range []struct {
		name string
		data string
		is   error
		msg  string
	}{
		{"magic", "HG21\x00\x00\x00\x00", ErrMalformed, "not a bundle2"},
		{"negative params", "HG20\xff\xff\xff\xff", ErrMalformed, "negative bundle param size"},
		{"huge params", "HG20\x7f\xff\xff\xff", ErrMalformed, "too large"},
		{"unknown mandatory stream param", "HG20\x00\x00\x00\x03Foo" + "\x00\x00\x00\x00", ErrUnsupported, "Stream Parameter - Foo"},
		{"bad compression", "HG20\x00\x00\x00\x0eCompression=XX", ErrUnsupported, "Compression"},
		{"empty param name", "HG20\x00\x00\x00\x03a  ", ErrMalformed, "empty"},
		{"digit param", "HG20\x00\x00\x00\x011", ErrMalformed, "non letter"},
		{"negative part header", hdr + "\xff\xff\xff\xfe", ErrMalformed, "negative part header size"},
		{"huge part header", hdr + "\x7f\xff\xff\xff", ErrMalformed, "too large"},
		{"short header", hdr + "\x00\x00\x00\x02\x05a", ErrMalformed, "too short"},
		{"bad type", hdr + string(rawPart("a/b", 0, nil, nil)) + "\x00\x00\x00\x00", ErrMalformed, "invalid part type"},
		{"negative chunk", hdr + string(rawPart("output", 0, nil, nil)) + "\xff\xff\xff\xfe", ErrMalformed, "negative payload chunk size"},
		{"truncated chunk", hdr + string(rawPart("output", 0, nil, nil)) + "\x00\x00\x00\x10abc", ErrMalformed, "stream ended unexpectedly"},
		{"no end marker", hdr + string(rawPart("output", 0, nil, nil)) + "\x00\x00\x00\x00", ErrMalformed, "stream ended unexpectedly"},
		{"nested interrupt", hdr + string(rawPart("output", 0, nil, nil)) + "\xff\xff\xff\xff" + string(rawPart("output", 1, nil, nil)) + "\xff\xff\xff\xff", ErrMalformed, "nested"},
		{"mandatory part in interrupt", hdr + string(rawPart("output", 0, nil, nil)) + "\xff\xff\xff\xff" + string(rawPart("FOO", 1, nil, nil)), ErrUnsupported, "foo"},
	} {
		_, _, err := readAllParts(t, []byte(tc.data))
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %v with %q", tc.name, err, tc.is, tc.msg)
		}
	}
}

func TestBundle2Compression(t *testing.T) {
	var inner bytes.Buffer
	bw, _ := NewWriter(&inner)
	bw.WritePart("output", false, nil, nil, []byte("compressed payload"))
	bw.Close()
	core := inner.Bytes()[8:] // parts and end marker
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(core)
	zw.Close()
	var zs bytes.Buffer
	enc, _ := zstd.NewWriter(&zs)
	enc.Write(core)
	enc.Close()
	for comp, body := range map[string][]byte{"GZ": z.Bytes(), "ZS": zs.Bytes(), "UN": core} {
		p := "Compression=" + comp
		data := append(append([]byte("HG20"), be32(int32(len(p)))...), p...)
		data = append(data, body...)
		_, payloads, err := readAllParts(t, data)
		if err != nil || len(payloads) != 1 || string(payloads[0]) != "compressed payload" {
			t.Errorf("%s: %v %q", comp, err, payloads)
		}
		// Truncated compressed streams fail cleanly.
		for i := 12 + len(p); i < len(data); i += 7 {
			if _, _, err := readAllParts(t, data[:i]); err == nil {
				t.Errorf("%s truncated at %d: no error", comp, i)
			}
		}
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("a,b c/d~e%"); got != "a%2Cb%20c/d~e%25" {
		t.Errorf("quote: %q", got)
	}
	if got := Unquote("a%2Cb%2cc%zz%"); got != "a,b,c%zz%" {
		t.Errorf("unquote: %q", got)
	}
	// Values checked against Python: urllib.parse.quote(s) / unquote.
	for _, tc := range []struct{ in, want string }{
		{"HG20\nbookmarks", "HG20%0Abookmarks"},
		{"changegroup=01,02", "changegroup%3D01%2C02"},
		{"a/b c~d_e.f-g", "a/b%20c~d_e.f-g"},
		{"\xff", "%FF"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back := Unquote(tc.want); back != tc.in {
			t.Errorf("Unquote(%q) = %q", tc.want, back)
		}
	}
	// Python keeps malformed escapes literally.
	for _, s := range []string{"%", "%4", "%zz", "100%"} {
		if got := Unquote(s); got != s {
			t.Errorf("Unquote(%q) = %q", s, got)
		}
	}
}
