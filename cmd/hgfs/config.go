package main

import (
	"github.com/hgfs/hgfs/config"
)

type configSet = config.Config

// loadConfig builds the configuration: hgrc files, then --config overrides.
func loadConfig(overrides []string) (*configSet, error) {
	cfg := config.New()
	for _, o := range overrides {
		s, n, v, err := config.ParseOverride(o)
		if err != nil {
			return nil, abortf("%v", err)
		}
		cfg.Set(s, n, v, "--config")
	}
	return cfg, nil
}
