package snowflake

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// ParseLayout parses a layout spec. A spec is either
//
//   - a preset name (see Presets), optionally followed by ",epoch=…" to
//     move its epoch and by ",name=value" to set one of its fixed fields:
//     "twitter", "twitter,epoch=2020-01-01T00:00:00Z" or
//     "vesta-max-peak,method=2" (Vesta's REST generation method); or
//   - a full spec of comma-separated tokens: "name:bits" for the time,
//     datacenter, worker and sequence fields, "name:bits=value" for a
//     fixed field, "unit=1ms|10ms|1s" and "epoch=<Unix milliseconds>|<RFC
//     3339>", e.g.
//     "time:41,datacenter:5,worker:5,sequence:12,unit=1ms,epoch=1288834974657".
//     Fields are listed from the most significant bits down; unit and
//     epoch are required.
//
// Spaces around tokens are ignored. The result is validated (see
// Layout.Validate); its Name is the preset's name when the layout is
// exactly a preset and "custom" otherwise. Every malformed spec returns an
// error wrapping idforge.ErrInvalidLayout that names the offending token.
// ParseLayout does not check that the epoch is in the past: New does.
func ParseLayout(spec string) (Layout, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Layout{}, layoutErr("empty layout spec")
	}
	tokens := strings.Split(spec, ",")
	for i := range tokens {
		tokens[i] = strings.TrimSpace(tokens[i])
		if tokens[i] == "" {
			return Layout{}, layoutErr("empty token %d in %q", i+1, spec)
		}
	}

	var l Layout
	var err error
	if first := tokens[0]; !strings.ContainsAny(first, ":=") {
		l, err = parsePreset(first, tokens[1:])
	} else {
		l, err = parseFull(tokens)
	}
	if err != nil {
		return Layout{}, err
	}
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	l.Name = presetNameOf(l)
	return l, nil
}

// splitKeyValue splits a "key=value" token; ok is false when the token is
// a field token (it has a ':' before any '=') or has no '='.
func splitKeyValue(tok string) (key, value string, ok bool) {
	eq := strings.IndexByte(tok, '=')
	if eq < 0 || strings.IndexByte(tok[:eq], ':') >= 0 {
		return "", "", false
	}
	return strings.TrimSpace(tok[:eq]), strings.TrimSpace(tok[eq+1:]), true
}

func parsePreset(name string, rest []string) (Layout, error) {
	l, err := Preset(name)
	if err != nil {
		return Layout{}, err
	}
	seen := map[string]bool{}
	for _, tok := range rest {
		key, value, ok := splitKeyValue(tok)
		i := slices.IndexFunc(l.Fields, func(f Field) bool { return f.Kind == KindFixed && f.Name == key })
		switch {
		case ok && key == "epoch":
			if err := l.setting(seen, tok, key, value); err != nil {
				return Layout{}, err
			}
		case ok && i >= 0 && !seen[key]:
			v, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return Layout{}, layoutErr("token %q: value %q is not a number", tok, value)
			}
			l.Fields[i].Value, seen[key] = v, true
		default:
			return Layout{}, layoutErr("token %q: only epoch=… and, once each, the preset's fixed fields (name=value) may follow a preset name", tok)
		}
	}
	return l, nil
}

func parseFull(tokens []string) (Layout, error) {
	var l Layout
	seen := map[string]bool{}
	for _, tok := range tokens {
		if key, value, ok := splitKeyValue(tok); ok {
			if err := l.setting(seen, tok, key, value); err != nil {
				return Layout{}, err
			}
			continue
		}
		f, err := parseField(tok)
		if err != nil {
			return Layout{}, err
		}
		l.Fields = append(l.Fields, f)
	}
	if !seen["unit"] {
		return Layout{}, layoutErr("no unit=… token (want unit=1ms, unit=10ms or unit=1s)")
	}
	if !seen["epoch"] {
		return Layout{}, layoutErr("no epoch=… token (want Unix milliseconds or RFC 3339)")
	}
	return l, nil
}

// setting applies the token tok, key=value, to l. seen holds the settings
// given so far: each may be given once.
func (l *Layout) setting(seen map[string]bool, tok, key, value string) (err error) {
	if seen[key] {
		return layoutErr("token %q: %s given twice", tok, key)
	}
	switch key {
	case "unit":
		l.Unit, err = parseUnit(tok, value)
	case "epoch":
		l.Epoch, err = parseEpoch(tok, value)
	default:
		return layoutErr("token %q: unknown setting %q (want unit=… or epoch=…)", tok, key)
	}
	seen[key] = true
	return err
}

func parseField(tok string) (Field, error) {
	colon := strings.IndexByte(tok, ':')
	if colon < 0 {
		return Field{}, layoutErr("token %q: not a field (name:bits), a fixed field (name:bits=value), unit=… or epoch=…", tok)
	}
	name := strings.TrimSpace(tok[:colon])
	rest := tok[colon+1:]
	bitsText, valueText, hasValue := strings.Cut(rest, "=")
	bitsText = strings.TrimSpace(bitsText)
	bits, err := strconv.Atoi(bitsText)
	if err != nil {
		return Field{}, layoutErr("token %q: bits %q is not a number", tok, bitsText)
	}
	if bits < 1 || bits > 62 {
		return Field{}, layoutErr("token %q: %d bits, want 1 to 62", tok, bits)
	}
	kind := kindByName(name)
	if !hasValue {
		if kind == 0 {
			return Field{}, layoutErr("token %q: unknown field %q (want time, datacenter, worker or sequence; a fixed field is name:bits=value)", tok, name)
		}
		return Field{Kind: kind, Name: name, Bits: bits}, nil
	}
	if kind != 0 {
		return Field{}, layoutErr("token %q: the %s field takes no value; only fixed fields do", tok, name)
	}
	if !validName(name) {
		return Field{}, layoutErr("token %q: fixed field name %q must be a letter followed by letters, digits, '_' or '-'", tok, name)
	}
	valueText = strings.TrimSpace(valueText)
	value, err := strconv.ParseInt(valueText, 10, 64)
	if err != nil {
		return Field{}, layoutErr("token %q: value %q is not a number", tok, valueText)
	}
	return Field{Kind: KindFixed, Name: name, Bits: bits, Value: value}, nil
}

func parseUnit(tok, value string) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err == nil {
		for _, u := range units {
			if d == u {
				return d, nil
			}
		}
	}
	return 0, layoutErr("token %q: unit %q not supported (want 1ms, 10ms or 1s)", tok, value)
}

func parseEpoch(tok, value string) (time.Time, error) {
	digits := value != ""
	for i := 0; i < len(value); i++ {
		digits = digits && '0' <= value[i] && value[i] <= '9'
	}
	if digits {
		ms, err := strconv.ParseInt(value, 10, 64)
		if err != nil || ms >= maxExpiresMs {
			return time.Time{}, layoutErr("token %q: epoch %s ms is out of range", tok, value)
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return time.Time{}, layoutErr("token %q: epoch %q is neither Unix milliseconds nor RFC 3339", tok, value)
	}
	return t.UTC(), nil
}
