// Package schemas holds agentconform's JSON Schemas for every stream (the
// spec's §8 as written, what the real CLIs emit today, the shim contract and
// the unified contract) and validates decoded events against them.
//
// The files are plain JSON Schema, usable by any validator; FS exposes them.
// Validator adds what a plain validator cannot: it picks the one branch an
// event's type selects, and it tells drift (types, fields and values the
// schema does not know) apart from violations.
package schemas

import (
	"embed"
	"io/fs"
)

//go:embed spec observed shim unified transcript harness results appserver acp README.md
var embedded embed.FS

// FS returns the embedded schema files, laid out as in the repository:
// spec/, observed/<cli>/<version>/, shim/, unified/.
func FS() fs.FS { return embedded }
