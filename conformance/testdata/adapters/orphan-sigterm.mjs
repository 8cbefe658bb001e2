#!/usr/bin/env node
// orphan-sigterm.mjs: a BUGGY test adapter (profile native, agents codex and
// gemini, supports interrupt). See README.md in this directory.
//
// Planted bug: abort sends ONE SIGTERM and forgets the process. The CLI is
// started with child_process.spawn's defaults (same process group as the
// adapter). On `interrupt` the adapter sends the CLI SIGTERM, reports the
// turn at once as turn_end ok:false "aborted" and stops listening to it; on
// `close` it writes end and exits at once, never waiting for the child and
// never escalating to SIGKILL. A CLI that ignores SIGTERM (or takes its time
// over it) is left running after the adapter has exited.
//
// How the real thing looks: AI SDK community providers that wrap a CLI pass
// the caller's AbortSignal to child_process.spawn({signal}), whose abort
// sends killSignal (SIGTERM by default) once; the provider's stream then
// errors with AbortError and nothing waits for the 'exit' event or sends a
// SIGKILL later.
//
// Everything else follows conformance/HARNESS.md: hello first, the CLI's
// JSON lines handed on re-serialised (JSON.stringify), one turn_end per
// turn, end last, exit 0 after close. A `send` resumes the session in a new
// process (codex exec resume ID / gemini --resume ID).

import { Adapter, log, record } from './_harness.mjs';

// The CLI is spawned with child_process.spawn's defaults (stdin /dev/null:
// codex and gemini read stdin to EOF before they start).
class OrphanSigterm extends Adapter {
  turnState() {
    return { forgotten: false };
  }

  line(t, line) {
    if (t.forgotten) return; // aborted: nobody listens any more
    super.line(t, line);
  }

  exited(t, code, signal) {
    if (t.forgotten) return;
    super.exited(t, code, signal);
  }

  // interrupt is the bug: one SIGTERM, the turn reported as aborted at
  // once, and the process forgotten (no wait, no SIGKILL later).
  interrupt() {
    const t = this.turn;
    if (!t) return false;
    t.forgotten = true;
    try {
      t.child.kill('SIGTERM');
    } catch (err) {
      log('kill:', err.message);
    }
    record('turn_end', { ok: false, error: 'aborted', session_id: this.session.id || '' });
    this.turn = null;
    return true;
  }

  close() {
    this.closing = true;
    this.pending.length = 0;
    if (this.turn) this.interrupt(); // the caller is gone: abort the turn the same way
    record('end', { ok: true });
    // Exit at once: nothing waits for the child.
    process.exit(0);
  }
}

const adapter = new OrphanSigterm({ name: 'orphan-sigterm', agents: ['codex', 'gemini'], supports: ['interrupt'] });
process.on('SIGINT', () => {
  if (!adapter.interrupt()) log('interrupt: no running turn; ignored');
});
adapter.serve();
