#!/usr/bin/env node
// pid-signals.mjs: a BUGGY test adapter (profile native, agents codex,
// gemini and claude, supports interrupt). See README.md in this directory.
//
// Planted bug: signals reach only the process the adapter started. The CLI
// is spawned with child_process.spawn's defaults (in the adapter's own
// process group), interrupted with child.kill('SIGINT'), then SIGTERM and
// SIGKILL two seconds apart, all to that one pid, and nothing ever
// signals or kills its process group. The turn is reported when that
// process exits (the 'exit' event), so a pipe held open elsewhere does not
// hold the adapter up. Against a CLI that is one process it works; against
// a CLI behind its npm launcher the signals stop at the launcher (Gemini's
// ignores them, Claude's fallback launcher dies of them alone) and the
// SIGKILL leaves the CLI itself running, orphaned; and whatever the CLI's
// tools leave behind in the group outlives the adapter.
//
// How the real thing looks: most Node wrappers of a CLI: spawn() without
// detached, abort via child.kill() or spawn's AbortSignal, no
// process.kill(-pid) anywhere.
//
// Everything else follows conformance/HARNESS.md: hello first, the CLI's
// JSON lines handed on re-serialised, one turn_end per turn, end last,
// exit 0 after close. A `send` resumes the session in a new process.

import { spawn } from 'node:child_process';
import readline from 'node:readline';

import { Adapter, cliArgs, executable } from './_harness.mjs';

class PidSignals extends Adapter {
  // runTurn is the base's, except that the turn ends at 'exit' (the
  // process the adapter started has exited), not at 'close' (every pipe
  // it had has ended).
  runTurn(prompt) {
    const s = this.session;
    const child = spawn(executable(s.agent), cliArgs(s.agent, prompt, s.permission, s.id), {
      cwd: s.cwd || process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const t = { child, terminal: false, error: '', spawnError: null, interrupted: '', timers: [], ...this.turnState() };
    this.turn = t;
    const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
    rl.on('line', (line) => {
      if (this.turn === t) this.line(t, line);
    });
    child.on('error', (err) => {
      t.spawnError = err;
      this.exited(t, null, null);
    });
    child.on('exit', (code, signal) => {
      // What was already read is handed on first.
      setImmediate(() => {
        if (this.turn === t) this.exited(t, code, signal);
      });
    });
  }
}

const adapter = new PidSignals({ name: 'pid-signals', agents: ['codex', 'gemini', 'claude'], supports: ['interrupt'] });
adapter.serve();
