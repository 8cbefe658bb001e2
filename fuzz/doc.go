// Package fuzz fuzzes adapters, and the parsers they depend on, with Go's
// native fuzzing (go test -fuzz): the targets are in package fuzz/targets,
// their bodies and everything they use here.
//
// The adapter targets start from a structure-aware mutator (Decode): the
// fuzzer's bytes choose a fixture, a seed and a list of mutations from the
// fakes' fault vocabulary (package fakecli/faults), event-level and
// pipe-level, plus the caller's interrupt, so that Go's engine explores
// transcripts rather than random bytes. An execution (Case) plays the
// mutated transcript either in process, straight into a reference
// translator through the reference drivers' line splitting and turn logic
// (InProcess, Execute), or through the harness against the fake CLIs for
// any adapter command (External). Every execution is judged by the
// Properties: the adapter ends its stream properly, its output is valid
// for its profile, every id it reports came from the CLI, it neither
// invents nor loses what the lossless checks see, and it finishes within a
// deadline.
//
// The JSON-RPC surfaces have their own inputs. A client of `codex
// app-server` (agent AgentAppServer) is fuzzed on the app-server fixtures
// with the faults that act on a JSON-RPC session and the JSON-RPC aware
// edits the fuzzer makes to the transcript itself (rpc_drop,
// rpc_duplicate, rpc_reorder, rpc_rename: editVocabulary); an Agent
// Client Protocol agent (ExternalOptions.Profile "acp") behind
// agentconform's editor, on the fixtures of the CLIs it drives. Their
// executions are judged on three more properties: one terminal outcome
// per turn (PropOutcome), every request of the server answered
// (PropAnswered), nothing left running (PropReaped, for every external
// adapter). Search is a deterministic random search over encoded inputs,
// with which the tests find the planted bugs of the test clients and
// agents within a bounded number of executions. FuzzRPCMessage, FuzzACP
// and FuzzAppServer fuzz the JSON-RPC decoders and the acp and appserver
// validators on any bytes: no panic, no hang, every finding located
// (line, byte offset, JSON pointer).
//
// A failure shrinks (Shrink) to the smallest transcript that still fails
// the same way and is saved as a Crasher: an agentconform/v1 transcript
// whose header names the property; Replay re-runs one and says FIXED,
// FAILED or ERROR. Seeds are every fixture, the interrupt-position sweep
// and the line-size ladder (Seeds); ExportSeedCorpora writes them, with the
// committed corpora, as OSS-Fuzz seed corpora. `agentconform fuzz` is the
// command.
package fuzz
