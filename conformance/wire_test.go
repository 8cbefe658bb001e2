package conformance

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentconform/agentconform/fakecli"
)

// TestWireLinesCutAsAdaptersDo checks that the wire is cut into lines the
// way the reference adapters cut it: two objects run together are two
// lines, blank lines are skipped, an unfinished last line is kept, and
// each line gets its "out" record's time.
func TestWireLinesCutAsAdaptersDo(t *testing.T) {
	o := &Observation{
		Wire: []WireProcess{{PID: 7, Bytes: []byte("{\"type\":\"a\"}{\"type\":\"b\"}\n\n  \nbanner\r\n{\"type\":\"c\",\"s\":\"}{\"}\n{\"type\":\"d\"")}},
	}
	for _, ms := range []int64{1, 2, 3, 4, 5} {
		o.Fake = append(o.Fake, fakeOut(7, ms))
	}
	var got []string
	var times []int64
	for _, l := range o.wireLines()[0] {
		got = append(got, string(l.Raw))
		times = append(times, l.TMS)
	}
	want := []string{`{"type":"a"}`, `{"type":"b"}`, "banner", `{"type":"c","s":"}{"}`, `{"type":"d"`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int64{1, 2, 3, 4, 5}, times); d != "" {
		t.Errorf("times (-want +got):\n%s", d)
	}
}

func fakeOut(pid int, ms int64) fakecli.Observation {
	return fakecli.Observation{PID: pid, Kind: "out", TMS: ms}
}
