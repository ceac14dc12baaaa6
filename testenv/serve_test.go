package testenv

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	dir := t.TempDir()
	Hg(t, dir, "init", "r")
	repo := filepath.Join(dir, "r")
	if err := os.WriteFile(filepath.Join(repo, "f"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Hg(t, repo, "commit", "-qAm", "one")
	url := Serve(t, repo)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %q", url)
	}
	resp, err := http.Get(url + "?cmd=heads")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := string(Hg(t, repo, "log", "-r", "tip", "-T", "{node}\n"))
	if string(body) != want {
		t.Fatalf("heads = %q, want %q", body, want)
	}

	// extraArgs reach hg serve: without streaming, no stream capability.
	url2 := Serve(t, repo, "--config", "server.uncompressed=false")
	resp, err = http.Get(url2 + "?cmd=capabilities")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "streamreqs") || strings.Contains(string(body), "stream%3Dv2") {
		t.Fatalf("server.uncompressed=false still advertises streaming: %s", body)
	}
}
