#!/usr/bin/env node
// error-swallowed.mjs: a BUGGY test adapter (profile native, agents codex,
// gemini and claude, no capabilities). See README.md in this directory.
//
// Planted bug: the CLI's error message never reaches the caller. The adapter
// hands on the events it renders and keeps the failure events for itself:
// Codex `error` and `turn.failed`, Gemini `error` events and a `result` with
// status error, Claude's `result` with is_error true. It then reports the
// failed turn by the process's exit status alone: turn_end ok:false
// "<cli> exited with code N". The user learns that the turn failed, never
// why (an invalid API key, a rate limit, the turn limit).
//
// How the real thing looks: the "Claude Code process exited with code 1"
// of SDK wrappers that reject on the child's exit code before (or instead
// of) reading its error result; stream handlers that skip Codex `error`
// events as reconnect noise and map turn.failed to a generic failure.
//
// Everything else follows conformance/HARNESS.md: hello first, the other
// CLI JSON lines handed on re-serialised (JSON.stringify), one turn_end per
// turn, end last, exit 0 after close. Claude runs in print mode; a `send`
// resumes the session in a new process.

import { Adapter } from './_harness.mjs';

// failureEvent reports whether a CLI event says the turn failed.
function failureEvent(agent, obj) {
  switch (agent) {
    case 'codex':
      return obj.type === 'error' || obj.type === 'turn.failed';
    case 'gemini':
      return obj.type === 'error' || (obj.type === 'result' && obj.status !== 'success');
    default:
      return obj.type === 'result' && obj.is_error === true;
  }
}

class ErrorSwallowed extends Adapter {
  event(t, obj) {
    if (failureEvent(this.session.agent, obj)) return; // the bug: kept back, and its message with it
    super.event(t, obj);
  }

  failure(t, code, signal) {
    const agent = this.session.agent;
    if (t.spawnError) return `starting ${agent}: ${t.spawnError.message}`;
    if (t.interrupted) return t.interrupted;
    if (signal) return `${agent} was killed by ${signal}`;
    if (code !== 0) return `${agent} exited with code ${code}`;
    if (!t.terminal) return `${agent} exited without its terminal event`;
    return '';
  }
}

new ErrorSwallowed({ name: 'error-swallowed', agents: ['codex', 'gemini', 'claude'], supports: ['max_turns'] }).serve();
