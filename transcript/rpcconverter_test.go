package transcript

import (
	"encoding/json"
	"testing"
)

func TestFillJSON(t *testing.T) {
	vars := Vars{"s": "a\"b", "n": json.Number("3"), "f": 1.5}
	for in, want := range map[string]string{
		`"id":{{json:s}}`:    `"id":"a\"b"`,
		`"id":{{json:n}}`:    `"id":3`,
		`"id":{{json:f}}`:    `"id":1.5`,
		`"id":"{{s}}"`:       `"id":"a\"b"`,
		`"id":{{json:none}}`: `"id":{{json:none}}`,
	} {
		if got := vars.Fill(in); got != want {
			t.Errorf("Fill(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestRPCConverter(t *testing.T) {
	c := NewRPCConverter()
	var req, note, answer, text Step
	c.Expect(&req, `{"jsonrpc":"2.0","id":"r-1","method":"session/prompt","params":{}}`)
	c.Expect(&note, `{"jsonrpc":"2.0","method":"session/cancel","params":{}}`)
	c.Expect(&answer, `{"jsonrpc":"2.0","id":0,"result":{}}`)
	c.Expect(&text, `hello`)
	if req.Match["method"] != "session/prompt" || req.Capture["rpc1"] != "/id" || req.Recorded == "" {
		t.Errorf("request step %+v", req)
	}
	if note.Match["method"] != "session/cancel" || note.Capture != nil {
		t.Errorf("notification step %+v", note)
	}
	if answer.Match["id"] == nil || answer.Match["method"] != nil {
		t.Errorf("answer step %+v", answer)
	}
	if text.Text != "hello" || text.Match != nil {
		t.Errorf("text step %+v", text)
	}
	if c.Name("r-1") != "rpc1" || c.Name(json.Number("0")) != "" {
		t.Errorf("names %q %q", c.Name("r-1"), c.Name(json.Number("0")))
	}
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":"r-1","result":{"x":{"id":"r-1"}}}`:     `{"jsonrpc":"2.0","id":{{json:rpc1}},"result":{"x":{"id":"r-1"}}}`,
		`{"jsonrpc":"2.0","id":"r-1","error":{"code":1,"message":""}}`: `{"jsonrpc":"2.0","id":{{json:rpc1}},"error":{"code":1,"message":""}}`,
		`{"jsonrpc":"2.0","id":"r-1","method":"x"}`:                    `{"jsonrpc":"2.0","id":"r-1","method":"x"}`,
		`{"jsonrpc":"2.0","id":"other","result":{}}`:                   `{"jsonrpc":"2.0","id":"other","result":{}}`,
		`{"result":{},"jsonrpc":"2.0", "id" : "r-1"}`:                  `{"result":{},"jsonrpc":"2.0", "id" : {{json:rpc1}}}`,
	} {
		if got := c.Template(in); got != want {
			t.Errorf("Template(%s) = %s, want %s", in, got, want)
		}
	}
}
