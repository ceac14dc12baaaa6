package main

import (
	"testing"

	"github.com/hgfs/hgfs/config"
	"github.com/hgfs/hgfs/streamclone"
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
	got, err = dirOptions(cfg)
	want := streamclone.DirOptions{BackgroundClose: false, MinFileCount: 10, MaxQueue: 7, ThreadCount: 2}
	if err != nil || got != want {
		t.Errorf("configured: %+v %v, want %+v", got, err, want)
	}
	cfg.Set("worker", "backgroundclosethreadcount", "0", "test")
	if _, err := dirOptions(cfg); err == nil {
		t.Errorf("zero closer threads accepted")
	}
}
