package validate

import (
	"bytes"
	"strconv"

	"github.com/agentconform/agentconform/acp"
	"github.com/agentconform/agentconform/acp/acpschema"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// ACPDialect is the Result.Dialect of an Agent Client Protocol session.
const ACPDialect = "acp"

// validateACPTranscript judges an agentconform/v1 transcript of an ACP
// session (acp.IsTranscript): both directions, client lines from the in
// steps' recorded lines, along every path through its branches, under the
// rules of package acp and the ACP schema.
func validateACPTranscript(t *transcript.Transcript, opts Options, res *Result, emit func(finding.Finding)) error {
	res.Dialect = ACPDialect
	res.Profile = acpProfile(opts.Profile)
	res.SchemaFile = acpschema.SchemaFile
	res.SchemaVersion = acpschema.SchemaVersion
	res.CLIVersion = t.Header.CLIVersion
	sv, err := acpschema.Schema()
	if err != nil {
		return err
	}
	paths, err := acp.Paths(t)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range paths {
		for _, entries := range p.Processes {
			res.Lines += len(entries)
			for _, f := range acp.Check(acp.NewTrace(entries), t.Name, acp.CheckOptions{Schema: sv, Profile: acp.Profile(res.Profile)}) {
				if p.Name != "" {
					f.Message += " (on the path through " + p.Name + ")"
				}
				key := f.Rule.ID + "\x00" + strconv.Itoa(f.Line) + "\x00" + f.Pointer
				if seen[key] {
					continue
				}
				seen[key] = true
				emit(f)
			}
		}
	}
	return nil
}

// guessSide tells who wrote a JSON-RPC line of a log without directions:
// a response comes from the side that did not send the outstanding
// request with its id (when both sides have one, a result with an
// "outcome" or a "content" answers the agent's permission or file
// request); a request or notification from the side that does not handle
// its method.
func guessSide(raw []byte, open map[acp.Side]map[string]bool) acp.Side {
	m, err := acp.Decode(raw)
	if err != nil {
		return acp.Agent
	}
	switch m.Kind {
	case acp.Response:
		byClient, byAgent := open[acp.Client][m.IDKey()], open[acp.Agent][m.IDKey()]
		switch {
		case byAgent && !byClient:
			return acp.Client
		case byAgent && byClient && (bytes.Contains(m.Result, []byte(`"outcome"`)) || bytes.Contains(m.Result, []byte(`"content"`))):
			return acp.Client
		}
		return acp.Agent
	default:
		sv, err := acpschema.Schema()
		if err == nil && sv.Knows(acp.Client, m.Method) {
			return acp.Agent
		}
		return acp.Client
	}
}

// ACPRules are the rules validate applies to ACP sessions, for catalogues.
func ACPRules() []*finding.Rule { return acp.Rules }

// acpProfile is the profile an ACP session is judged by: spec when asked
// for, else observed (what Gemini CLI 0.61.0 does; the ACP rules have no
// unified or shim profile).
func acpProfile(p schemas.Profile) schemas.Profile {
	if p == schemas.Spec {
		return schemas.Spec
	}
	return schemas.Observed
}
