package validate

import (
	"github.com/agentconform/agentconform/appserver"
	"github.com/agentconform/agentconform/finding"
	"github.com/agentconform/agentconform/schemas"
	"github.com/agentconform/agentconform/transcript"
)

// appServerV1 judges an agentconform/v1 transcript of `codex app-server`
// (JSON-RPC in both directions) with package appserver: messages against
// the schemas Codex generates for the recorded version, id pairing,
// turns and approvals. Options.Schemas, when set, supplies the schema
// bundle as it does every other schema.
func appServerV1(t *transcript.Transcript, name string, opts Options, p *pipe, res *Result) (*Result, error) {
	version := opts.CLIVersion
	if version == "" {
		version = t.Header.CLIVersion
	}
	s := appServerSchema(opts, version, name, res, p)
	// The stream is Codex's; the schema file says which surface of it.
	res.Dialect = schemas.Codex
	res.CLIVersion = t.Header.CLIVersion
	t.Name = name
	appserver.CheckTranscript(t, s, p.emit)
	res.Lines = len(t.Steps) + 1
	return res, nil
}

// appServerSchema loads the app-server schema of version (from
// opts.Schemas when set), names it in res, and reports through p when
// there is none (nil then).
func appServerSchema(opts Options, version, name string, res *Result, p *pipe) *appserver.Schema {
	var s *appserver.Schema
	var err error
	if opts.Schemas != nil {
		s, err = appserver.LoadSchemaFS(opts.Schemas.FS(), version)
	} else {
		s, err = appserver.LoadSchema(version)
	}
	if err != nil {
		p.emit(finding.Finding{Rule: RuleNoSchema, File: name, Line: 1, Message: err.Error()})
		return nil
	}
	res.SchemaFile, res.SchemaVersion = s.File, s.Version
	return s
}
