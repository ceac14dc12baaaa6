package config

import "strings"

// Evolution is obsolete.getoptions for the two options hgfs acts on:
// whether the repository creates (accepts) obsolescence markers, and
// whether it exchanges them on pull (never without creating them). Each
// is experimental.evolution.<option> when set; else
// experimental.evolution as a boolean for all options; else that setting
// as a list naming options ("all" for every one). A per-option setting
// that is not a boolean is an error, as in hg.
func (c *Config) Evolution() (createMarkers, exchange bool, err error) {
	createMarkers, err = c.evolutionOption(EvolutionCreateMarkers, "createmarkers")
	if err != nil || !createMarkers {
		return false, false, err
	}
	exchange, err = c.evolutionOption(EvolutionExchange, "exchange")
	return createMarkers, exchange, err
}

func (c *Config) evolutionOption(k Known, option string) (bool, error) {
	if _, ok := c.Lookup(k.Section, k.Name); ok {
		return c.GetBool(k)
	}
	it, ok := c.Lookup(EvolutionAll.Section, EvolutionAll.Name)
	if !ok {
		return false, nil
	}
	if b, ok := parseBool(it.Value); ok {
		return b, nil
	}
	for _, v := range strings.FieldsFunc(it.Value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if v == "all" || v == option {
			return true, nil
		}
	}
	return false, nil
}
