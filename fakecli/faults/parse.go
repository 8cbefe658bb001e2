package faults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// fault is one parsed item of a spec.
type fault struct {
	name  string // as the spec names it (an alias, or def's name)
	def   *faultDef
	index int               // position in the spec, from 0
	given map[string]string // parameters as the spec gave them (normalised)
	ints  map[string]int64  // integer parameters: given, or fixed defaults
	strs  map[string]string // other parameters: given, or fixed defaults
}

// has reports whether the spec gave the parameter.
func (f *fault) has(name string) bool {
	_, ok := f.given[name]
	return ok
}

// Parse reads a fault spec: items separated by ";", each a fault name
// optionally followed by ":" and comma-separated key=value parameters, as
// in "slicer:max=1;latency:ms=50,jitter=10;crlf". A backslash escapes ";",
// "," or "\" inside a value (banner:text=a\,b). Blank items are skipped, and
// a blank spec gives a nil plan and no error. Unknown faults, unknown or
// repeated parameters and bad values are errors naming the item and what
// is allowed. seed drives every random choice the faults make.
func Parse(spec string, seed int64) (*Plan, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	p := &Plan{seed: seed, sleep: preciseSleep, now: time.Now}
	for _, item := range splitEscaped(spec, ';') {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		f, err := parseItem(item, len(p.faults))
		if err != nil {
			return nil, fmt.Errorf("faults: item %d %q: %w", len(p.faults)+1, item, err)
		}
		p.faults = append(p.faults, f)
	}
	if len(p.faults) == 0 {
		return nil, nil
	}
	return p, nil
}

// parseItem parses "name" or "name:key=value,...".
func parseItem(item string, index int) (*fault, error) {
	name, rest, hasParams := strings.Cut(item, ":")
	name = strings.TrimSpace(name)
	def := lookup(name)
	if def == nil {
		return nil, fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(names(), ", "))
	}
	f := &fault{name: name, def: def, index: index, given: map[string]string{}, ints: map[string]int64{}, strs: map[string]string{}}
	if hasParams && strings.TrimSpace(rest) != "" {
		if len(def.params) == 0 {
			return nil, fmt.Errorf("%s takes no parameters", name)
		}
		for _, kv := range splitEscaped(rest, ',') {
			if strings.TrimSpace(kv) == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok {
				return nil, fmt.Errorf("parameter %q has no value (want key=value; %s takes %s)", k, name, def.paramList())
			}
			pd := def.param(k)
			if pd == nil {
				return nil, fmt.Errorf("unknown parameter %q (%s takes %s)", k, name, def.paramList())
			}
			if _, dup := f.given[k]; dup {
				return nil, fmt.Errorf("parameter %q given twice", k)
			}
			v = unescape(v)
			if pd.kind != kindText {
				v = strings.TrimSpace(v)
			}
			norm, n, err := pd.check(v)
			if err != nil {
				return nil, fmt.Errorf("%s=%q: %v", k, v, err)
			}
			f.given[k] = norm
			if pd.kind == kindInt {
				f.ints[k] = n
			} else {
				f.strs[k] = norm
			}
		}
	}
	if t := def.aliasOf; t != nil {
		f.def = t
		for k, v := range def.preset {
			f.given[k] = v
			f.strs[k] = v
		}
		def = t
	}
	for i := range def.params {
		pd := &def.params[i]
		if _, ok := f.given[pd.name]; ok || !pd.fixed {
			continue
		}
		if pd.kind == kindInt {
			f.ints[pd.name], _ = strconv.ParseInt(pd.dflt, 10, 64)
		} else {
			f.strs[pd.name] = pd.dflt
		}
	}
	return f, nil
}

// check validates one value and returns it normalised (and as a number
// for integer parameters).
func (pd *paramDef) check(v string) (string, int64, error) {
	switch pd.kind {
	case kindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < pd.min || n > pd.max {
			return "", 0, fmt.Errorf("want a whole number from %d to %d", pd.min, pd.max)
		}
		if pd.multiple > 0 && n%pd.multiple != 0 {
			return "", 0, fmt.Errorf("want a multiple of %d", pd.multiple)
		}
		return strconv.FormatInt(n, 10), n, nil
	case kindSignal:
		s := strings.ToUpper(v)
		if !strings.HasPrefix(s, "SIG") {
			s = "SIG" + s
		}
		for _, known := range signals {
			if s == known {
				return s, 0, nil
			}
		}
		return "", 0, fmt.Errorf("want a signal name: %s", strings.Join(signals, ", "))
	case kindWord:
		if v == "" {
			return "", 0, fmt.Errorf("want a non-empty value")
		}
		if len(pd.words) > 0 && !slices.Contains(pd.words, v) {
			return "", 0, fmt.Errorf("want one of %s", strings.Join(pd.words, ", "))
		}
		return v, 0, nil
	}
	return v, 0, nil
}

// signals are the signals a fake can die by (those transcripts may name).
var signals = []string{"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGPIPE", "SIGUSR1", "SIGUSR2"}

// splitEscaped splits s at every sep not preceded by a backslash, keeping
// the escapes (unescape removes them).
func splitEscaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unescape turns "\x" into "x" for any byte x; a trailing lone backslash
// stays.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
