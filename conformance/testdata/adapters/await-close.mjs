#!/usr/bin/env node
// await-close.mjs: a BUGGY test adapter (profile native, agents codex,
// gemini and claude, supports interrupt). See README.md in this directory.
//
// Planted bug: the turn is over when the CLI's stdout has ended. The CLI
// is spawned in a process group of its own (detached), and interrupted,
// or stopped at close, by signals to that group (SIGINT, then SIGTERM and
// SIGKILL two seconds apart), so a launcher in front of the CLI does not
// stop them. But the adapter reports a turn only on Node's 'close' event,
// which waits for the end of every pipe the child had, and it kills
// nothing once the CLI has exited: a process the CLI left behind with its
// stdout inherited keeps the pipe open, and the turn, the session and the
// caller wait for as long as that process lives.
//
// How the real thing looks: Node wrappers that resolve on
// child.on('close') or on the end of a readline interface over
// child.stdout (for await ... of rl), and Python ones that read
// proc.stdout to EOF before proc.wait().
//
// Everything else follows conformance/HARNESS.md: hello first, the CLI's
// JSON lines handed on re-serialised, one turn_end per turn, end last,
// exit 0 after close. A `send` resumes the session in a new process.

import { ProcessGroup } from './process-group.mjs';

// AwaitClose is process-group.mjs but for the end of the turn.
class AwaitClose extends ProcessGroup {
  watch(t, child) {
    child.on('close', (code, signal) => this.exited(t, code, signal));
  }
}

new AwaitClose({ name: 'await-close', agents: ['codex', 'gemini', 'claude'], supports: ['interrupt'] }).serve();
