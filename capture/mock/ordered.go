package mock

import (
	"bytes"
	"encoding/json"
)

// obj is a JSON object that keeps its keys in the order given, as the
// real APIs write them (the CLIs pass some objects on verbatim, so the
// order shows in their streams).
type obj []kv

type kv struct {
	k string
	v any
}

// o builds an obj from alternating keys and values.
func o(pairs ...any) obj {
	out := make(obj, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, kv{pairs[i].(string), pairs[i+1]})
	}
	return out
}

// set replaces a key's value, or appends the key.
func (m obj) set(k string, v any) obj {
	for i := range m {
		if m[i].k == k {
			m[i].v = v
			return m
		}
	}
	return append(m, kv{k, v})
}

// get returns a key's value.
func (m obj) get(k string) (any, bool) {
	for _, p := range m {
		if p.k == k {
			return p.v, true
		}
	}
	return nil, false
}

// MarshalJSON writes the keys in order.
func (m obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
