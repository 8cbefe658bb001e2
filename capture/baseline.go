package capture

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentconform/agentconform/fixtures"
	"github.com/agentconform/agentconform/fixtures/acpfixtures"
	asfixtures "github.com/agentconform/agentconform/fixtures/appserver"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// Baseline is where drift finds the transcript a capture is compared
// with: the embedded fixtures, or a directory of captures or fixtures.
type Baseline struct {
	// Dir is a directory laid out as capture writes (Dir/<cli>/<version>/<scenario>.jsonl)
	// or as the fixtures are (Dir/<cli>/<scenario>.jsonl); "" means the
	// embedded fixtures.
	Dir string
}

// Name says where the baseline comes from.
func (b Baseline) Name() string {
	if b.Dir == "" {
		return "embedded fixtures"
	}
	return b.Dir
}

// Load returns the baseline transcript for a capture of cli's scenario at
// version: in a capture directory, the one of the newest version older
// than version (else the newest not newer); in a fixtures layout, the
// fixture. It returns nil and no error when there is none.
func (b Baseline) Load(cli, version, scenario string) (*transcript.Transcript, error) {
	if b.Dir == "" {
		t, err := fixtures.Load(cli + "/" + scenario)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return t, err
	}
	entries, err := os.ReadDir(filepath.Join(b.Dir, cli))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var older, notNewer string
	for _, e := range entries {
		if !IsDirEntry(filepath.Join(b.Dir, cli), e) {
			continue
		}
		v := e.Name()
		if _, err := os.Stat(filepath.Join(b.Dir, cli, v, scenario+".jsonl")); err != nil {
			continue
		}
		c := schemas.CompareVersions(v, version)
		if c < 0 && (older == "" || schemas.CompareVersions(v, older) > 0) {
			older = v
		}
		if c <= 0 && (notNewer == "" || schemas.CompareVersions(v, notNewer) > 0) {
			notNewer = v
		}
	}
	pick := older
	if pick == "" {
		pick = notNewer
	}
	var p string
	if pick != "" {
		p = filepath.Join(b.Dir, cli, pick, scenario+".jsonl")
	} else if _, err := os.Stat(filepath.Join(b.Dir, cli, scenario+".jsonl")); err == nil {
		p = filepath.Join(b.Dir, cli, scenario+".jsonl")
	} else {
		return nil, nil
	}
	t, err := transcript.LoadFile(os.DirFS(filepath.Dir(p)), filepath.Base(p), transcript.Options{})
	if err != nil {
		return nil, fmt.Errorf("capture: baseline %s: %w", p, err)
	}
	t.Name = p
	return t, nil
}

// LoadFor returns the baseline of the capture t: Load's, by the capture's
// scenario; for the JSON-RPC surfaces, whose embedded fixtures are sets of
// their own, the fixture of that scenario (an app-server scenario's of
// the same name in fixtures/appserver, an ACP scenario's as
// fixtures/acpfixtures names it: acpFixtureName), also looked for under
// that name in a fixtures layout. It returns nil and no error when there
// is none.
func (b Baseline) LoadFor(t *transcript.Transcript) (*transcript.Transcript, error) {
	h := t.Header
	proto := rpcProtoOf(t)
	if proto == notRPC {
		return b.Load(h.CLI, h.CLIVersion, h.Scenario)
	}
	fixture := h.Scenario
	if proto == protoACP {
		fixture = acpFixtureName(h.Scenario)
	}
	if b.Dir == "" {
		var (
			base *transcript.Transcript
			err  error
		)
		switch {
		case fixture == "":
			return nil, nil
		case proto == protoACP:
			base, err = acpfixtures.Load(h.CLI + "/" + fixture)
		default:
			base, err = asfixtures.Load(h.CLI + "/" + fixture)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return base, err
	}
	base, err := b.Load(h.CLI, h.CLIVersion, h.Scenario)
	if base != nil || err != nil || fixture == "" || fixture == h.Scenario {
		return base, err
	}
	return b.Load(h.CLI, h.CLIVersion, fixture)
}

// acpFixtureName is the ACP fixture of a capture's scenario, as the
// converter of fixtures/acpfixtures names it: "acp-X" is "X", except that
// the allow and deny captures of a permission request are one fixture,
// "permission", a load of an unknown session is none (the fake answers
// it itself: ""), and the captures of a client without --yolo or without
// the fs capability ("X-ask", "X-ask-deny", "fs-nofs", "fs-nofs-deny")
// are the variant "variants/X-ask" ("variants/fs-nofs"); those of a client
// that set a mode first ("X-mode-yolo", "X-mode-autoedit") have none.
func acpFixtureName(scenario string) string {
	name, ok := strings.CutPrefix(scenario, "acp-")
	switch {
	case !ok, name == "load-unknown":
		return ""
	case name == "permission-allow", name == "permission-deny":
		return "permission"
	case strings.Contains(name, "-mode-"):
		// A client that set a mode first: the fake answers the
		// session/set_mode itself and replays another fixture, which
		// never saw that request.
		return ""
	}
	if v := strings.TrimSuffix(name, "-deny"); strings.HasSuffix(v, "-ask") || strings.HasSuffix(v, "-nofs") {
		return "variants/" + v
	}
	return name
}

// DriftReport compares one capture with its baseline and with the
// observed schema.
type DriftReport struct {
	// CLI, Scenario and Version name the capture.
	CLI      string `json:"cli"`
	Scenario string `json:"scenario"`
	Version  string `json:"cli_version"`
	// Baseline names the transcript compared with; BaselineVersion and
	// BaselineSource are from its header. Baseline is "" when there was
	// none.
	Baseline        string `json:"baseline,omitempty"`
	BaselineVersion string `json:"baseline_version,omitempty"`
	BaselineSource  string `json:"baseline_source,omitempty"`
	// Changes are the differences in shape, along the paths the capture
	// took.
	Changes []Change `json:"changes,omitempty"`
	// NotCompared says which parts of those paths the baseline leaves to
	// the fake (a signal's default handling, a control request it scripts
	// no step for), so that they were not compared, and why.
	NotCompared []string `json:"not_compared,omitempty"`
	// SchemaFile is the observed schema the capture was validated by;
	// Schema lists what it did not know, Violations what broke it.
	SchemaFile string   `json:"schema,omitempty"`
	Schema     []string `json:"schema_drift,omitempty"`
	Violations []string `json:"violations,omitempty"`
}

// Drifted reports whether anything changed or is unknown.
func (r *DriftReport) Drifted() bool {
	return len(r.Changes) > 0 || len(r.Schema) > 0 || len(r.Violations) > 0
}

// CompareCapture compares a captured transcript with its baseline (the
// shape along the paths the capture took, see Along: event kinds, fields,
// values, order, exits) and validates it under the observed profile
// (schema drift and violations).
func CompareCapture(ctx context.Context, t *transcript.Transcript, b Baseline) (*DriftReport, error) {
	h := t.Header
	r := &DriftReport{CLI: h.CLI, Scenario: h.Scenario, Version: h.CLIVersion}
	base, err := b.LoadFor(t)
	if err != nil {
		return nil, err
	}
	if base != nil {
		r.Baseline = base.Name
		if b.Dir == "" {
			r.Baseline = "fixture " + base.Name
		}
		r.BaselineVersion, r.BaselineSource = base.Header.CLIVersion, base.Header.Source
		along := Along
		if rpcProtoOf(t) != notRPC {
			along = AlongRPC
		}
		bs, cs := along(base, t)
		r.Changes = Compare(bs, cs)
		r.NotCompared = bs.Notes
	}
	v, err := Validate(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	r.SchemaFile = v.Result.SchemaFile
	for _, d := range v.Result.Drift {
		r.Schema = append(r.Schema, fmt.Sprintf("%s %q at %s (%d×)", d.RuleID, d.Name, d.Pointer, d.Count))
	}
	for _, f := range v.Violations {
		r.Violations = append(r.Violations, f.String())
	}
	return r, nil
}

// IsDirEntry reports whether the entry e of directory dir is a directory,
// or a symbolic link to one (a version directory linked in from elsewhere
// counts).
func IsDirEntry(dir string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && st.IsDir()
}
