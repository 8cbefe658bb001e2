package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestVersion pins `agentconform version` and `--version`.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{arg}, nil, &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s", arg, code, errb.String())
		}
		if !strings.HasPrefix(out.String(), "agentconform ") {
			t.Errorf("%s printed %q", arg, out.String())
		}
	}
}
