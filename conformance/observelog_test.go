package conformance

import (
	"encoding/json"
	"testing"

	"github.com/agentconform/agentconform/fakecli"
	"github.com/google/go-cmp/cmp"
)

// TestWriteRecord: the fast decoding of write records gives what
// encoding/json gives, and declines everything else (which is then decoded
// in full).
func TestWriteRecord(t *testing.T) {
	fast := []string{
		`{"t_ms":1,"pid":24526,"kind":"out","bytes":77,"line":4}`,
		`{"t_ms":0,"pid":1,"kind":"err","bytes":0,"line":0}`,
		`{"t_ms":123456789,"pid":2147483647,"kind":"out","bytes":67108864,"line":12}`,
	}
	for _, line := range fast {
		got, ok := writeRecord([]byte(line))
		var want fakecli.Observation
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("%s: declined", line)
		} else if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-json +fast):\n%s", line, d)
		}
	}
	slow := []string{
		`{"t_ms":1,"pid":2,"kind":"stdin","line":"{}"}`,
		`{"t_ms":1,"pid":2,"kind":"out","bytes":7,"line":4,"x":1}`,
		`{"t_ms":1,"pid":2,"kind":"out","bytes":7}`,
		`{"t_ms":01,"pid":2,"kind":"out","bytes":7,"line":4}`,
		`{"t_ms":-1,"pid":2,"kind":"out","bytes":7,"line":4}`,
		`{"t_ms":1.5,"pid":2,"kind":"out","bytes":7,"line":4}`,
		`{"t_ms":1,"pid":2,"kind":"outer","bytes":7,"line":4}`,
		`{"t_ms":1,"pid":2,"kind":"out","bytes":7,"line":4} `,
		`{"t_ms":1,"pid":99999999999999999999,"kind":"out","bytes":7,"line":4}`,
		`{"pid":2,"t_ms":1,"kind":"out","bytes":7,"line":4}`,
		`{"t_ms":,"pid":2,"kind":"out","bytes":7,"line":4}`,
		`{"t_ms":1,"pid":2,"kind":"out","bytes":7,"line":4`,
	}
	for _, line := range slow {
		if o, ok := writeRecord([]byte(line)); ok {
			t.Errorf("%s: taken as %+v", line, o)
		}
	}
}

// FuzzWriteRecord: whatever the fast decoding takes, encoding/json decodes
// to the same record.
func FuzzWriteRecord(f *testing.F) {
	f.Add([]byte(`{"t_ms":1,"pid":24526,"kind":"out","bytes":77,"line":4}`))
	f.Add([]byte(`{"t_ms":0,"pid":1,"kind":"err","bytes":0,"line":0}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := writeRecord(line)
		if !ok {
			return
		}
		var want fakecli.Observation
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("%q taken, but encoding/json says %v", line, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%q (-json +fast):\n%s", line, d)
		}
	})
}
