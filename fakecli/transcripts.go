package fakecli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentconform/agentconform/fixtures"
	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/transcript"
)

// The kinds of transcript reference a session record keeps, so that a
// later process of the session (resume) replays the same transcript.
const (
	refFixture = "fixture:"
	refFile    = "file:"
)

// transcriptRef says which transcript this process replays, from the
// environment: AGENTCONFORM_TRANSCRIPT (a file), AGENTCONFORM_FIXTURE (an
// embedded fixture, "codex/single-tool" or just "single-tool", or one of an
// older CLI version, "claude/2.1.329/single-tool"), or the CLI's plain-text
// fixture.
func transcriptRef(cli string, env func(string) string) (string, error) {
	file, fix := env(EnvTranscript), env(EnvFixture)
	switch {
	case file != "" && fix != "":
		return "", fmt.Errorf("both %s and %s are set; set one", EnvTranscript, EnvFixture)
	case file != "":
		abs, err := filepath.Abs(file)
		if err != nil {
			return "", fmt.Errorf("%s=%q: %w", EnvTranscript, file, err)
		}
		return refFile + abs, nil
	case fix != "":
		if !strings.Contains(fix, "/") {
			fix = cli + "/" + fix
		}
		return refFixture + fix, nil
	}
	return refFixture + cli + "/plain-text", nil
}

// refName is a reference as the observation log and messages show it.
func refName(ref string) string {
	if s, ok := strings.CutPrefix(ref, refFixture); ok {
		return s
	}
	return strings.TrimPrefix(ref, refFile)
}

// loadRef loads the transcript a reference names and checks that it was
// recorded from cli.
func loadRef(cli, ref string) (*transcript.Transcript, error) {
	var (
		t   *transcript.Transcript
		err error
	)
	switch {
	case strings.HasPrefix(ref, refFixture):
		t, err = loadFixture(strings.TrimPrefix(ref, refFixture))
	case strings.HasPrefix(ref, refFile):
		t, err = loadFile(cli, strings.TrimPrefix(ref, refFile))
	default:
		err = fmt.Errorf("unknown transcript reference %q", ref)
	}
	if err != nil {
		return nil, err
	}
	if t.Header.CLI != cli {
		return nil, fmt.Errorf("transcript %s was recorded from %s, but this fake is %s: the harness started the wrong fake or selected the wrong transcript (%s / %s)",
			refName(ref), t.Header.CLI, cli, EnvTranscript, EnvFixture)
	}
	return t, nil
}

func loadFixture(name string) (*transcript.Transcript, error) {
	if asfixtures.IsName(name) {
		t, err := asfixtures.Load(name)
		if err != nil {
			return nil, fmt.Errorf("no fixture %q (%s): %w", name, EnvFixture, err)
		}
		return t, nil
	}
	if cli, version, scenario := fixtures.SplitName(name); version != "" {
		// A fixture of an older CLI version: that version's, or none.
		t, err := fixtures.LoadVersion(cli, version, scenario)
		if err != nil {
			return nil, fmt.Errorf("no fixture %q (%s): %w", name, EnvFixture, err)
		}
		return t, nil
	}
	all, err := fixtures.All()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range all {
		if f.Name == name {
			t, err := transcript.LoadFile(fixtures.FS(), f.Path, transcript.Options{})
			if err != nil {
				return nil, fmt.Errorf("fixture %s: %w", name, err)
			}
			t.Name = name
			return t, nil
		}
		names = append(names, f.Name)
	}
	return nil, fmt.Errorf("no fixture %q (%s); there are: %s", name, EnvFixture, strings.Join(names, ", "))
}

func loadFile(cli, path string) (*transcript.Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvTranscript, err)
	}
	defer f.Close()
	t, err := transcript.Load(f, path, transcript.Options{})
	if err == nil {
		return t, nil
	}
	// A plain capture whose events name no CLI: take it as this CLI's.
	if es, ok := transcript.IsErrors(err); ok && len(es) == 1 && es[0].Line == 0 && strings.Contains(es[0].Msg, "no event says which CLI") {
		if _, serr := f.Seek(0, 0); serr == nil {
			return transcript.Load(f, path, transcript.Options{CLI: cli})
		}
	}
	return nil, err
}

// recordedSessionID is the session (thread) id a transcript's events
// carry: the header's, else the first one found in its stdout lines.
func recordedSessionID(t *transcript.Transcript, keys ...string) string {
	if t.Header.SessionID != "" {
		return t.Header.SessionID
	}
	for _, st := range t.Steps {
		if st.Op != transcript.OpOut {
			continue
		}
		for _, k := range keys {
			if v := jsonStringField(st.Text, k); v != "" {
				return v
			}
		}
	}
	return ""
}
