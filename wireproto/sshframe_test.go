package wireproto

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadFrame(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("5\nhello0\n\n3\nab"))
	if b, err := readFrame(r, 100); err != nil || string(b) != "hello" {
		t.Fatalf("frame: %q %v", b, err)
	}
	if b, err := readFrame(r, 100); err != nil || len(b) != 0 {
		t.Fatalf("empty frame: %q %v", b, err)
	}
	if _, err := readFrame(r, 100); !errors.Is(err, errOutOfBand) {
		t.Fatalf("oob: %v", err)
	}
	if _, err := readFrame(r, 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short frame: %v", err)
	}
	for _, bad := range []string{"-1\n", "x\n", "1e3\n", "99999999999999999999999\n"} {
		if _, err := readFrame(bufio.NewReader(strings.NewReader(bad)), 100); !errors.Is(err, ErrProtocol) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := readFrame(bufio.NewReader(strings.NewReader("101\n")), 100); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
}

func TestReadHandshake(t *testing.T) {
	reply := "Welcome to the server\n1\n\n" + // banner that looks like a between reply start
		"412\ncapabilities: batch stream unbundle=HG10GZ\n1\n\n"
	lines, err := readHandshake(bufio.NewReader(strings.NewReader(reply)))
	// "1\n" followed by "\n" ends the handshake at the first occurrence, as
	// hg does; the capabilities line is then missing, which the peer
	// reports as no suitable response.
	if err != nil || len(lines) != 2 {
		t.Fatalf("lines %q %v", lines, err)
	}
	lines, err = readHandshake(bufio.NewReader(strings.NewReader("banner\n48\ncapabilities: batch stream\n1\n\n")))
	if err != nil || lines[len(lines)-2] != "capabilities: batch stream" {
		t.Fatalf("lines %q %v", lines, err)
	}
	if _, err := readHandshake(bufio.NewReader(strings.NewReader(strings.Repeat("noise\n", 600)))); !errors.Is(err, ErrProtocol) {
		t.Errorf("noise: %v", err)
	}
	if _, err := readHandshake(bufio.NewReader(strings.NewReader("abort: repository /x not found\n"))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("eof: %v", err)
	}
	long := bytes.Repeat([]byte("x"), maxLineLen+10)
	if _, err := readHandshake(bufio.NewReader(bytes.NewReader(long))); !errors.Is(err, ErrProtocol) {
		t.Errorf("long line: %v", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("5\nhello"))
	f.Add([]byte("\n"))
	f.Add([]byte("1\n\n"))
	f.Add([]byte("capabilities: a b\n1\n\n"))
	f.Add([]byte("18446744073709551616\nx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := readFrame(bufio.NewReader(bytes.NewReader(data)), 1<<16)
		if err == nil && len(b) > 1<<16 {
			t.Fatalf("frame of %d bytes over the limit", len(b))
		}
		lines, err := readHandshake(bufio.NewReader(bytes.NewReader(data)))
		if err == nil && len(lines) > maxHandshakeLines {
			t.Fatalf("%d lines", len(lines))
		}
	})
}

func TestParseSSHURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SSHLocation
		cmd  string
	}{
		{"ssh://example.com/repo", SSHLocation{Host: "example.com", Path: "repo"}, "ssh example.com 'hg -R repo serve --stdio'"},
		{"ssh://joe@example.com:2222//abs/path", SSHLocation{User: "joe", Host: "example.com", Port: "2222", Path: "/abs/path"}, "ssh -p 2222 'joe@example.com' 'hg -R /abs/path serve --stdio'"},
		{"ssh://host", SSHLocation{Host: "host", Path: "."}, "ssh host 'hg -R . serve --stdio'"},
		{"ssh://host/with%20space", SSHLocation{Host: "host", Path: "with space"}, `ssh host 'hg -R '\''with space'\'' serve --stdio'`},
		{"ssh://[::1]:22/r", SSHLocation{Host: "::1", Port: "22", Path: "r"}, "ssh -p 22 '::1' 'hg -R r serve --stdio'"},
	} {
		got, err := ParseSSHURL(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if *got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.in, *got, tc.want)
		}
		if c := got.Command("", ""); c != tc.cmd {
			t.Errorf("%s: command %s, want %s", tc.in, c, tc.cmd)
		}
	}
	for _, bad := range []string{"ssh://-oProxyCommand=x/p", "ssh://%2DoProxy/p", "ssh:///path", "ssh://u:pw@h/p", "ssh://h:port/p", "http://h/p"} {
		if _, err := ParseSSHURL(bad); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
