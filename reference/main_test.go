package reference

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestMainCommandLine checks the adapter's command line: usage errors name
// the command as it was called and exit 2, --help exits 0, and a session
// that is closed at once says hello and ends.
func TestMainCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		stdin  string
		code   int
		stdout []string
		stderr []string
	}{
		{args: []string{"--profile", "bogus"}, code: 2, stderr: []string{"agentconform-adapter: ", "Run 'agentconform-adapter --help'"}},
		{args: []string{"extra"}, code: 2, stderr: []string{`unexpected argument "extra"`}},
		{args: []string{"--help"}, code: 0, stderr: []string{"Usage: agentconform-adapter [--profile unified|shim]", "--turn-timeout"}},
		{args: []string{"--profile", "shim"}, stdin: `{"op":"close"}` + "\n", code: 0, stdout: []string{`"agentconform":"hello"`, `"profile":"shim"`, `"agentconform":"end"`}},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), "agentconform-adapter", tc.args, strings.NewReader(tc.stdin), &out, &errb)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr %s", tc.args, code, tc.code, errb.String())
		}
		for _, s := range tc.stdout {
			if !strings.Contains(out.String(), s) {
				t.Errorf("%v: stdout lacks %q:\n%s", tc.args, s, out.String())
			}
		}
		for _, s := range tc.stderr {
			if !strings.Contains(errb.String(), s) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, s, errb.String())
			}
		}
	}
}
