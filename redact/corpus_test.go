package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentconform/agentconform/redact/redacttest"
)

// sameShape reports how b differs from a in shape: other keys, other
// array lengths, other types or other non-string values; strings may
// differ.
func sameShape(a, b any, at string) error {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("%s: object became %T with other keys", at, b)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return fmt.Errorf("%s: key %q is gone", at, k)
			}
			if err := sameShape(v, w, at+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Errorf("%s: array changed", at)
		}
		for i := range x {
			if err := sameShape(x[i], y[i], fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	case string:
		if _, ok := b.(string); !ok {
			return fmt.Errorf("%s: string became %T", at, b)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("%s: %v became %v", at, a, b)
		}
	}
	return nil
}

// checkRedacted checks the redaction of one case's lines.
func checkRedacted(t *testing.T, c redacttest.Case, out []string) {
	t.Helper()
	if len(out) != len(c.Lines) {
		t.Fatalf("%d lines became %d", len(c.Lines), len(out))
	}
	all := strings.Join(out, "\n")
	for _, s := range redacttest.Survivors(all, c.Secrets) {
		t.Errorf("%q survived:\n%s", s, all)
	}
	if !strings.Contains(all, "<redacted:") {
		t.Errorf("no placeholder in:\n%s", all)
	}
	for i, l := range out {
		var before, after any
		if err := json.Unmarshal([]byte(c.Lines[i]), &before); err != nil {
			t.Fatalf("corpus line %d is not JSON: %v", i+1, err)
		}
		if err := json.Unmarshal([]byte(l), &after); err != nil {
			t.Errorf("line %d is no longer JSON: %v\n%s", i+1, err, l)
			continue
		}
		if err := sameShape(before, after, ""); err != nil {
			t.Errorf("line %d changed shape: %v\n%s", i+1, err, l)
		}
	}
}

// TestCorpusIsRedacted redacts every kind of fake credential of the corpus
// in the lines that carry it, as the recorder does (Lines): none
// survives, and every line stays JSON of the same shape, its strings
// replaced in place.
func TestCorpusIsRedacted(t *testing.T) {
	var missed []string
	for _, c := range redacttest.Corpus() {
		ok := t.Run(c.Kind, func(t *testing.T) {
			checkRedacted(t, c, New(Options{}).Lines(c.Lines))
		})
		if !ok {
			missed = append(missed, c.Kind)
		}
	}
	if len(missed) > 0 {
		t.Errorf("%d of %d kinds not redacted: %s", len(missed), len(redacttest.Corpus()), strings.Join(missed, ", "))
	}
}
