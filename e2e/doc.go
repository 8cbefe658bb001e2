// Package e2e holds agentconform's end-to-end tests against real clients:
// the official Claude Agent SDK and Codex SDK for TypeScript, each wrapped
// in a harness driver (conformance/drivers), driving the fake CLIs
// (fakecli) through the fixtures (fixtures).
//
// The tests prove three things per scenario: the SDK completes the
// fixture; it hands its caller exactly the messages the fake wrote (less
// the control messages it consumes, and with the transformations it is
// known to make, each spelled out); and what it did to the CLI (argv,
// environment, stdin, signals, exit) as the fake's observation log saw it.
//
// They need node and the drivers' packages (npm install in
// conformance/drivers). Without them the tests skip, except under CI=true,
// where they fail: CI must never pass by skipping them.
package e2e
