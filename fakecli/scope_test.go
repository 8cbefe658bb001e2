package fakecli

import "testing"

// TestFaultsScopeFirst pins AGENTCONFORM_FAULTS_SCOPE=first: a --version
// probe neither applies the faults nor uses them up, the first process
// that runs a turn applies them, and a later one (a resume) does not.
func TestFaultsScopeFirst(t *testing.T) {
	dir := t.TempDir()
	envOf := func(scope string) func(string) string {
		return func(k string) string {
			switch k {
			case EnvFaultsScope:
				return scope
			case EnvSessions:
				return dir
			}
			return ""
		}
	}
	first := envOf("first")
	steps := []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, false},
		{[]string{"-p", "hello"}, true},
		{[]string{"-p", "again", "--resume", "x"}, false},
	}
	for _, s := range steps {
		if got := faultsInScope(s.args, first); got != s.want {
			t.Errorf("scope first, args %v: faults applied %v, want %v", s.args, got, s.want)
		}
	}
	if !faultsInScope([]string{"-p", "x"}, envOf("")) {
		t.Error("without a scope every process must apply the faults")
	}
}

// TestFaultsScopeLater pins AGENTCONFORM_FAULTS_SCOPE=later: a --version
// probe applies nothing, the first process that runs a turn applies
// nothing, and every later one (a resume) applies the faults.
func TestFaultsScopeLater(t *testing.T) {
	dir := t.TempDir()
	later := func(k string) string {
		switch k {
		case EnvFaultsScope:
			return "later"
		case EnvSessions:
			return dir
		}
		return ""
	}
	for _, s := range []struct {
		args []string
		want bool
	}{
		{[]string{"--version"}, false},
		{[]string{"exec", "--json", "hello"}, false},
		{[]string{"exec", "--json", "resume", "x", "again"}, true},
		{[]string{"exec", "--json", "resume", "x", "and again"}, true},
	} {
		if got := faultsInScope(s.args, later); got != s.want {
			t.Errorf("scope later, args %v: faults applied %v, want %v", s.args, got, s.want)
		}
	}
}
