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
	var (
		s   *appserver.Schema
		err error
	)
	if opts.Schemas != nil {
		s, err = appserver.LoadSchemaFS(opts.Schemas.FS(), version)
	} else {
		s, err = appserver.LoadSchema(version)
	}
	if err != nil {
		p.emit(finding.Finding{Rule: RuleNoSchema, File: name, Line: 1, Message: err.Error()})
	} else {
		res.SchemaFile, res.SchemaVersion = s.File, s.Version
	}
	// The stream is Codex's; the schema file says which surface of it.
	res.Dialect = schemas.Codex
	res.CLIVersion = t.Header.CLIVersion
	t.Name = name
	appserver.CheckTranscript(t, s, p.emit)
	res.Lines = len(t.Steps) + 1
	return res, nil
}
