package main

import (
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/streamclone"
	"github.com/hgfs/hgfs/wireproto"
)

func TestDirOptionsFromConfig(t *testing.T) {
	cfg := config.New()
	got, err := dirOptions(cfg)
	if err != nil || got != streamclone.DefaultDirOptions() {
		t.Fatalf("defaults: %+v %v, want %+v", got, err, streamclone.DefaultDirOptions())
	}
	cfg.Set("worker", "backgroundclose", "no", "test")
	cfg.Set("worker", "backgroundcloseminfilecount", "10", "test")
	cfg.Set("worker", "backgroundclosemaxqueue", "7", "test")
	cfg.Set("worker", "backgroundclosethreadcount", "2", "test")
	cfg.Set("hgfs", "clone-writers", "0", "test")
	got, err = dirOptions(cfg)
	want := streamclone.DirOptions{BackgroundClose: false, MinFileCount: 10, MaxQueue: 7, ThreadCount: 2}
	if err != nil || got != want {
		t.Errorf("configured: %+v %v, want %+v", got, err, want)
	}
	cfg.Set("hgfs", "clone-writers", "64", "test")
	cfg.Set("worker", "backgroundclose", "yes", "test")
	if got, err := dirOptions(cfg); err != nil || got.Writers != 64 || !got.BackgroundClose {
		t.Errorf("64 writers, background closing: %+v %v", got, err)
	}
	for _, v := range []string{"-1", "65", "many"} {
		cfg.Set("hgfs", "clone-writers", v, "test")
		if _, err := dirOptions(cfg); err == nil {
			t.Errorf("clone-writers=%s accepted", v)
		}
	}
	cfg.Set("hgfs", "clone-writers", "4", "test")
	cfg.Set("worker", "backgroundclosethreadcount", "0", "test")
	if _, err := dirOptions(cfg); err == nil {
		t.Errorf("zero closer threads accepted")
	}
}

func TestCacheOptionsFromConfig(t *testing.T) {
	cfg := config.New()
	opt, err := cacheOptions(cfg)
	if err != nil || opt.CommitInterval != 50*time.Millisecond || opt.QueueCap != 16384 || opt.NoSync {
		t.Fatalf("defaults: %+v %v", opt, err)
	}
	cfg.Set("hgfs", "commit-interval", "20ms", "test")
	cfg.Set("hgfs", "queue-size", "64", "test")
	cfg.Set("hgfs", "durable", "false", "test")
	opt, err = cacheOptions(cfg)
	if err != nil || opt.CommitInterval != 20*time.Millisecond || opt.QueueCap != 64 || !opt.NoSync {
		t.Errorf("configured: %+v %v", opt, err)
	}
	for k, v := range map[string]string{"commit-interval": "soon", "queue-size": "0", "durable": "maybe"} {
		bad := config.New()
		bad.Set("hgfs", k, v, "test")
		if _, err := cacheOptions(bad); err == nil {
			t.Errorf("hgfs.%s=%s accepted", k, v)
		}
	}
}

func TestServerConfigStreams(t *testing.T) {
	cfg := config.New()
	sc, err := serverConfig(cfg)
	if err != nil || sc.MaxStreams != 16 {
		t.Fatalf("default: %d %v", sc.MaxStreams, err)
	}
	cfg.Set("hgfs", "serve-streams", "0", "test")
	if sc, err = serverConfig(cfg); err != nil || sc.MaxStreams != 0 {
		t.Errorf("0: %d %v", sc.MaxStreams, err)
	}
	for _, v := range []string{"-1", "lots"} {
		cfg.Set("hgfs", "serve-streams", v, "test")
		if _, err := serverConfig(cfg); err == nil {
			t.Errorf("serve-streams=%s accepted", v)
		}
	}
}

// TestServerConfigWriteTimeout: no write deadline unless
// hgfs.serve-write-timeout sets one.
func TestServerConfigWriteTimeout(t *testing.T) {
	cfg := config.New()
	if sc, err := serverConfig(cfg); err != nil || sc.WriteTimeout != 0 {
		t.Fatalf("default: %v %v", sc.WriteTimeout, err)
	}
	cfg.Set("hgfs", "serve-write-timeout", "90s", "test")
	if sc, err := serverConfig(cfg); err != nil || sc.WriteTimeout != 90*time.Second {
		t.Errorf("90s: %v %v", sc.WriteTimeout, err)
	}
	for _, v := range []string{"-1s", "lots"} {
		cfg.Set("hgfs", "serve-write-timeout", v, "test")
		if _, err := serverConfig(cfg); err == nil {
			t.Errorf("serve-write-timeout=%s accepted", v)
		}
	}
}

func TestServerConfigFromConfig(t *testing.T) {
	sc, err := serverConfig(config.New())
	if err != nil || sc != wireproto.DefaultServerConfig() {
		t.Fatalf("defaults: %+v %v, want %+v", sc, err, wireproto.DefaultServerConfig())
	}
	cfg := config.New()
	cfg.Set("phases", "publish", "no", "test")
	cfg.Set("server", "maxhttpheaderlen", "4096", "test")
	if sc, err := serverConfig(cfg); err != nil || sc.Publishing || sc.MaxHTTPHeaderLen != 4096 {
		t.Errorf("configured: %+v %v", sc, err)
	}
	cfg.Set("server", "maxhttpheaderlen", "0", "test")
	if sc, err := serverConfig(cfg); err != nil || sc.MaxHTTPHeaderLen != 1024 {
		t.Errorf("maxhttpheaderlen=0: %d %v", sc.MaxHTTPHeaderLen, err)
	}
	for k, v := range map[string]string{"phases.publish": "maybe", "server.maxhttpheaderlen": "long"} {
		bad := config.New()
		sec, name, _ := strings.Cut(k, ".")
		bad.Set(sec, name, v, "test")
		if _, err := serverConfig(bad); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
}

func TestLockTimeoutFromConfig(t *testing.T) {
	cfg := config.New()
	if d := lockTimeout(cfg); d != 600*time.Second {
		t.Errorf("default ui.timeout: %v", d)
	}
	cfg.Set("ui", "timeout", "5", "test")
	if d := lockTimeout(cfg); d != 5*time.Second {
		t.Errorf("ui.timeout=5: %v", d)
	}
	cfg.Set("ui", "timeout", "soon", "test")
	if d := lockTimeout(cfg); d != 600*time.Second {
		t.Errorf("ui.timeout=soon: %v, want the default", d)
	}
}
