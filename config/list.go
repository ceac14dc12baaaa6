package config

import "strings"

// ParseList splits a value as hg's configlist does (stringutil.parselist,
// keep in sync): items separated by commas or white space; an item that
// starts with a double quote runs to the closing one, \" standing for a
// quote inside it.
func ParseList(value string) []string {
	return configList(strings.TrimLeft(value, " ,\n"))
}

// listState is one state of parselist's machine: it consumes from
// s[offset:] and returns the next state (nil at the end).
type listState func(parts []string, s string, offset int) (listState, []string, int)

func configList(s string) []string {
	s = strings.TrimRight(s, " ,")
	if s == "" {
		return nil
	}
	state, parts, offset := listState(listPlain), []string{""}, 0
	for state != nil {
		state, parts, offset = state(parts, s, offset)
	}
	return parts
}

// pySpaces are the bytes of Python's bytes.isspace (and of \s in a bytes
// pattern), as a cutset; isSpace takes the same bytes.
const pySpaces = " \t\n\r\v\f"

// isSpace is Python's bytes.isspace for one byte.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

func listPlain(parts []string, s string, offset int) (listState, []string, int) {
	whitespace := false
	for offset < len(s) && (isSpace(s[offset]) || s[offset] == ',') {
		whitespace = true
		offset++
	}
	if offset >= len(s) {
		return nil, parts, offset
	}
	if whitespace {
		parts = append(parts, "")
	}
	last := len(parts) - 1
	switch {
	case s[offset] == '"' && parts[last] == "":
		return listQuote, parts, offset + 1
	case s[offset] == '"' && strings.HasSuffix(parts[last], `\`):
		parts[last] = parts[last][:len(parts[last])-1] + `"`
		return listPlain, parts, offset + 1
	}
	parts[last] += s[offset : offset+1]
	return listPlain, parts, offset + 1
}

func listQuote(parts []string, s string, offset int) (listState, []string, int) {
	if offset < len(s) && s[offset] == '"' { // ""
		parts = append(parts, "")
		offset++
		for offset < len(s) && (isSpace(s[offset]) || s[offset] == ',') {
			offset++
		}
		return listPlain, parts, offset
	}
	last := len(parts) - 1
	for offset < len(s) && s[offset] != '"' {
		if s[offset] == '\\' && offset+1 < len(s) && s[offset+1] == '"' {
			offset++
			parts[last] += `"`
		} else {
			parts[last] += s[offset : offset+1]
		}
		offset++
	}
	if offset >= len(s) {
		// No closing quote: the quote is an ordinary character and the
		// rest is split again.
		real := configList(parts[last])
		if len(real) == 0 {
			parts[last] = `"`
		} else {
			real[0] = `"` + real[0]
			parts = append(parts[:last], real...)
		}
		return nil, parts, offset
	}
	offset++
	for offset < len(s) && (s[offset] == ' ' || s[offset] == ',') {
		offset++
	}
	if offset >= len(s) {
		return nil, parts, offset
	}
	if offset+1 == len(s) && s[offset] == '"' {
		parts[last] += `"`
		offset++
	} else {
		parts = append(parts, "")
	}
	return listPlain, parts, offset
}
