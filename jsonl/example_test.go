package jsonl_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentconform/agentconform/jsonl"
)

// Read a stream line by line, collecting framing and parse findings.
func Example() {
	in := "{\"type\":\"turn.started\"}\r\n" +
		"Reading additional input from stdin...\n" +
		`{"item":{"id":"item_1","type":"web_search","id":"ws_1"}}`
	r := jsonl.NewReader(strings.NewReader(in), jsonl.Options{})
	for {
		l, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			fmt.Println(err)
			return
		}
		fs := jsonl.FramingFindings(l)
		if !l.TooLong {
			_, pfs := jsonl.Parse(l.Bytes, jsonl.ParseOptions{})
			jsonl.Locate(pfs, "out.jsonl", l)
			fs = append(fs, pfs...)
		}
		for _, f := range fs {
			fmt.Println(strings.TrimSpace(fmt.Sprint(f.Rule.ID, " ", f.Line, " ", f.Pointer)))
		}
	}
	// Output:
	// jsonl/crlf 1
	// jsonl/not-json 2
	// jsonl/no-final-newline 3
	// jsonl/duplicate-key 3 /item/id
}

func ExampleParse() {
	obj, fs := jsonl.Parse([]byte(`{"n":123456789012345678901234567890,"s":"\ud800"}`), jsonl.ParseOptions{})
	fmt.Printf("%T %v\n", obj["n"], obj["n"])
	for _, f := range fs {
		fmt.Println(f.Rule.ID, f.Column, f.Pointer)
	}
	// Output:
	// json.Number 123456789012345678901234567890
	// jsonl/number-precision 5 /n
	// jsonl/lone-surrogate 41 /s
}
