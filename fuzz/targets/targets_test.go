// Package targets holds agentconform's fuzz targets, for `go test -fuzz`
// and for ClusterFuzzLite and OSS-Fuzz (.clusterfuzzlite/build.sh builds
// each with compile_native_go_fuzzer). The targets themselves live in
// package fuzz; this file only names them, so that the libFuzzer build,
// which turns it into ordinary code, needs nothing else from a test file.
// A failing input Go's engine finds lands in testdata/fuzz/<Target> here
// and replays in every later go test.
package targets

import (
	"testing"

	"github.com/agentconform/agentconform/fuzz"
)

// FuzzValidate: the JSONL reader and validate on arbitrary bytes.
func FuzzValidate(f *testing.F) { fuzz.TargetValidate(f) }

// FuzzTranscript: the transcript format on arbitrary bytes.
func FuzzTranscript(f *testing.F) { fuzz.TargetTranscript(f) }

// FuzzRPCMessage: one line through both JSON-RPC decoders (ACP's and
// the app-server's).
func FuzzRPCMessage(f *testing.F) { fuzz.TargetRPCMessage(f) }

// FuzzACP: validate on ACP logs and transcripts (package acp's rules).
func FuzzACP(f *testing.F) { fuzz.TargetACP(f) }

// FuzzAppServer: package appserver's checker on app-server transcripts
// and logs.
func FuzzAppServer(f *testing.F) { fuzz.TargetAppServer(f) }

// FuzzFakeFlags: the fakes' flag parsing, through the fakes themselves.
func FuzzFakeFlags(f *testing.F) { fuzz.TargetFakeFlags(f) }

// FuzzReferenceUnified: the reference unified adapter in process, on
// mutated fixtures.
func FuzzReferenceUnified(f *testing.F) { fuzz.TargetReference(f, "unified") }

// FuzzReferenceShim: the reference shim adapter in process, on mutated
// fixtures.
func FuzzReferenceShim(f *testing.F) { fuzz.TargetReference(f, "shim") }

// FuzzExternalAdapter: the adapter $AGENTCONFORM_FUZZ_ADAPTER starts,
// through the harness and the fakes (it skips without one).
func FuzzExternalAdapter(f *testing.F) { fuzz.TargetExternal(f) }
