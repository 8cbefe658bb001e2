#!/usr/bin/env node
// handshake-timeout.mjs: a BUGGY test adapter (profile native, agents codex
// and gemini, supports nothing). See README.md in this directory.
//
// Planted bug: a fixed start-up timeout that gives up and forgets the CLI.
// If the CLI has written no line 500 ms after it was spawned, the adapter
// reports the turn as failed ("timed out waiting for the CLI to start") at
// once and stops listening to it, without stopping it: no signal, no wait.
// A CLI slow to start (loading MCP servers and plugins takes seconds) is
// taken for a failure; one that never gets past its start is left running
// after the adapter has exited.
//
// How the real thing looks: SDK clients whose initialize handshake is a
// promise raced against a fixed timeout; the timeout rejects the query, and
// nothing kills the child the query had spawned.
//
// Everything else follows conformance/HARNESS.md, as _harness.mjs does.

import { Adapter, record } from './_harness.mjs';

const startTimeout = 500;

class HandshakeTimeout extends Adapter {
  turnState() {
    return { seen: false, forgotten: false };
  }

  runTurn(prompt) {
    super.runTurn(prompt);
    const t = this.turn;
    t.timers.push(
      setTimeout(() => {
        if (t.seen || t.forgotten || this.turn !== t) return;
        // The bug: give up, report, forget; the child is left as it is.
        t.forgotten = true;
        record('turn_end', { ok: false, error: 'timed out waiting for the CLI to start', session_id: this.session.id || '' });
        this.next();
      }, startTimeout),
    );
  }

  line(t, line) {
    t.seen = true;
    if (!t.forgotten) super.line(t, line);
  }

  exited(t, code, signal) {
    if (!t.forgotten) super.exited(t, code, signal);
  }
}

new HandshakeTimeout({ name: 'handshake-timeout', agents: ['codex', 'gemini'], supports: [] }).serve();
