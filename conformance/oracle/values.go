package oracle

import (
	"bytes"
	"encoding/json"
	"math"
)

// getStr returns m[k] if it is a string, else "".
func getStr(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// getObj returns m[k] if it is an object, else nil.
func getObj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

// getBool returns m[k] if it is a boolean, else false.
func getBool(m map[string]any, k string) bool {
	b, _ := m[k].(bool)
	return b
}

// getInt returns m[k] as a whole number (a fraction truncated), 0 if it
// is no finite number.
func getInt(m map[string]any, k string) int64 {
	n, _ := intOf(m[k])
	return n
}

// getIntPtr returns m[k] as a whole number, nil if it is none.
func getIntPtr(m map[string]any, k string) *int64 {
	if n, ok := intOf(m[k]); ok {
		return &n
	}
	return nil
}

func intOf(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil {
			return int64(f), true
		}
	}
	return 0, false
}

// getFloatPtr returns m[k] if it is a number, else nil.
func getFloatPtr(m map[string]any, k string) *float64 {
	switch n := m[k].(type) {
	case float64:
		return &n
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return &f
		}
	}
	return nil
}

// clampSub is a-b, or 0 when that is negative (a counter that went
// backwards).
func clampSub(a, b int64) int64 { return max(a-b, 0) }

// jsonText renders a value as JSON text without HTML escaping (as the CLIs
// write it; object keys sorted).
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return ""
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}
