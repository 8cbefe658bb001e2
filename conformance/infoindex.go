package conformance

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// infoIndex is what a native adapter handed its caller, seen as
// information rather than shape: every string and number in its events,
// wherever it put them (strings that hold JSON are read too, as a library
// that hands a tool's input as a JSON string does), and per JSON path the
// concatenation of that path's strings across events, so that text
// streamed as deltas is found whole. Lossless checks of native adapters
// look facts up in it.
type infoIndex struct {
	leaves  []string          // every string, normalised (normText)
	paths   map[string]string // path -> its strings concatenated, normalised
	nums    map[float64]bool
	events  [][]string // per event, its strings normalised
	markers []bool     // per event, whether it says something failed
}

// infoIndex builds the index of the adapter's events, once.
func (o *Observation) infoIndex() *infoIndex {
	m := o.memoized()
	m.indexOnce.Do(func() { m.index = buildIndex(o.Events) })
	return m.index
}

func buildIndex(events []Event) *infoIndex {
	x := &infoIndex{paths: map[string]string{}, nums: map[float64]bool{}}
	raw := map[string]*strings.Builder{}
	var order []string
	for _, e := range events {
		var mine []string
		marker := false
		var walk func(path, key string, v any, depth int)
		walk = func(path, key string, v any, depth int) {
			if depth > 64 {
				return
			}
			if failureMarker(key, v) {
				marker = true
			}
			switch t := v.(type) {
			case string:
				n := normText(t)
				if n != "" {
					mine = append(mine, n)
				}
				b := raw[path]
				if b == nil {
					b = &strings.Builder{}
					raw[path] = b
					order = append(order, path)
				}
				b.WriteString(t)
				if inner, ok := jsonInside(t); ok {
					walk(path+"<json>", "", inner, depth+1)
				}
			case float64:
				x.nums[t] = true
			case json.Number:
				if f, err := t.Float64(); err == nil {
					x.nums[f] = true
				}
			case map[string]any:
				for k, c := range t {
					walk(path+"."+k, k, c, depth+1)
				}
			case []any:
				for _, c := range t {
					walk(path+"[]", key, c, depth+1)
				}
			}
		}
		walk("", "", e.Obj, 0)
		x.leaves = append(x.leaves, mine...)
		x.events = append(x.events, mine)
		x.markers = append(x.markers, marker)
	}
	for _, p := range order {
		x.paths[p] = normText(raw[p].String())
	}
	return x
}

// failureMarker reports whether key: v says that something failed:
// is_error/isError/error true, success/ok false, a non-empty error
// message or object, a status of failed (or error, declined, ...), a
// non-zero exit code, or an event type naming an error.
func failureMarker(key string, v any) bool {
	k := strings.ToLower(keyFolder.Replace(key))
	switch t := v.(type) {
	case bool:
		switch k {
		case "iserror", "error", "failed", "isfailure":
			return t
		case "success", "ok", "succeeded":
			return !t
		}
	case string:
		switch k {
		case "status", "state", "outcome":
			switch strings.ToLower(t) {
			case "failed", "failure", "error", "errored", "declined", "denied", "rejected", "cancelled", "canceled", "aborted":
				return true
			}
		case "error", "errormessage", "errortext":
			return t != ""
		case "type", "subtype", "kind":
			l := strings.ToLower(t)
			return strings.Contains(l, "error") || strings.Contains(l, "fail")
		}
	case float64:
		if strings.Contains(k, "exit") && t != 0 {
			return true
		}
	case json.Number:
		if strings.Contains(k, "exit") && t.String() != "0" {
			return true
		}
	case map[string]any:
		return k == "error" && len(t) > 0
	}
	return false
}

// keyFolder drops what failureMarker ignores in a key.
var keyFolder = strings.NewReplacer("_", "", "-", "")

// normText folds white space (runs become one space, the ends are
// trimmed): where a library trims an answer or reflows it, nothing is lost.
// Invalid UTF-8 bytes become U+FFFD. Text with nothing to fold (most of
// it) is returned as it is, uncopied; the rest is copied run by run.
func normText(s string) string {
	if isNorm(s) {
		return s
	}
	b := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				space = len(b) > 0
				i++
				continue
			}
			if space {
				b = append(b, ' ')
				space = false
			}
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && !asciiSpace[s[j]] {
				j++
			}
			b = append(b, s[i:j]...)
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			space = len(b) > 0
			i += size
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, r)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// isNorm reports whether normText would return s unchanged: valid UTF-8
// whose only white space is single ' ' between other characters.
func isNorm(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] && (c != ' ' || i == 0 || i+1 == len(s) || spaceAt(s, i+1)) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unicode.IsSpace(r) {
			return false
		}
		i += size
	}
	return true
}

// spaceAt reports whether the character at s[i:] is white space (an
// invalid byte is not).
func spaceAt(s string, i int) bool {
	if s[i] < utf8.RuneSelf {
		return asciiSpace[s[i]]
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}

// has reports whether the normalised text n is in the index: inside one
// string, or inside the concatenation of one path's strings.
func (x *infoIndex) has(n string) bool {
	if n == "" {
		return true
	}
	for _, l := range x.leaves {
		if strings.Contains(l, n) {
			return true
		}
	}
	for _, p := range x.paths {
		if strings.Contains(p, n) {
			return true
		}
	}
	return false
}

// hasAtom reports whether s (any text) is in the index.
func (x *infoIndex) hasAtom(s string) bool { return x.has(normText(s)) }

// hasText reports whether a piece of text (chunks the CLI sent one after
// the other) is in the index: whole, or chunk by chunk.
func (x *infoIndex) hasText(chunks []string) bool {
	if x.hasAtom(strings.Join(chunks, "")) {
		return true
	}
	for _, c := range chunks {
		if !x.hasAtom(c) {
			return false
		}
	}
	return true
}

// hasUsage reports whether a turn's token counts are among the numbers
// the adapter handed on: output tokens as they are, input tokens as they
// are or with the cached tokens added or taken away (libraries count
// them either way).
func (x *infoIndex) hasUsage(u usage) bool {
	if u.Output != 0 && !x.nums[float64(u.Output)] {
		return false
	}
	if u.Input == 0 {
		return true
	}
	for _, n := range []int64{u.Input, u.Input + u.Cached, u.Input - u.Cached, u.Input + u.Cached + u.CacheWrite} {
		if n > 0 && x.nums[float64(n)] {
			return true
		}
	}
	return false
}

// missingTool says what of the i-th tool call t the index lacks: an input
// value, the result, the error, or (for a call that failed) any sign in the
// events that carry it that it failed.
func (x *infoIndex) missingTool(i int, t tool) []string {
	name := fmt.Sprintf("tool call %d (%s %s)", i+1, t.Name, t.ID)
	var out []string
	in := atomsOf(t.Input)
	for _, a := range in {
		if !x.has(a) {
			out = append(out, name+": input "+strconv.Quote(clip(a, 200))+" not handed on")
			break
		}
	}
	res := atomsOf(t.Result)
	for _, a := range res {
		if !x.has(a) {
			out = append(out, name+": result "+strconv.Quote(clip(a, 200))+" not handed on")
			break
		}
	}
	for _, a := range atomsOf(t.Error) {
		if !x.has(a) {
			out = append(out, name+": the CLI's error "+strconv.Quote(clip(a, 200))+" not handed on")
			break
		}
	}
	if t.Success || t.LeftOpen {
		// A tool the CLI left open has no outcome to hand on: the CLI
		// never said it failed, and a native adapter hands on what the
		// CLI said (its start, with the input).
		return out
	}
	carriers := res
	if len(carriers) == 0 {
		carriers = in
	}
	for e, strs := range x.events {
		if !x.markers[e] {
			continue
		}
		for _, a := range carriers {
			for _, s := range strs {
				if strings.Contains(s, a) {
					return out
				}
			}
		}
	}
	if len(carriers) == 0 {
		for _, m := range x.markers {
			if m {
				return out
			}
		}
	}
	return append(out, name+": it failed, and no event that carries it says so (no error flag, failed status or non-zero exit code)")
}

// atomsOf returns the text values in vs, normalised: strings, and the
// strings inside objects and arrays (and inside strings holding JSON).
func atomsOf(vs ...any) []string {
	var out []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 64 {
			return
		}
		switch t := v.(type) {
		case string:
			if inner, ok := jsonInside(t); ok {
				walk(inner, depth+1)
				return
			}
			if n := normText(t); n != "" {
				out = append(out, n)
			}
		case map[string]any:
			for _, c := range t {
				walk(c, depth+1)
			}
		case []any:
			for _, c := range t {
				walk(c, depth+1)
			}
		}
	}
	for _, v := range vs {
		walk(v, 0)
	}
	return out
}

// missingAtoms returns the text values of want that none of have holds
// (each is looked for inside every value of have, and inside all of them
// joined, for a result a library split into parts).
func missingAtoms(want any, have []string) []string {
	joined := strings.Join(have, " ")
	var out []string
	for _, a := range atomsOf(want) {
		found := strings.Contains(joined, a)
		for _, h := range have {
			if found {
				break
			}
			found = strings.Contains(h, a)
		}
		if !found {
			out = append(out, a)
		}
	}
	return out
}

// jsonInside decodes a string that holds a JSON object or array (a tool
// input a library hands on as JSON text); ok is false for any other.
func jsonInside(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' && s[0] != '[' {
		return nil, false
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return nil, false
	}
	return v, true
}
