#!/usr/bin/env node
// closed-stream.mjs: a BUGGY test adapter (profile native, agents codex and
// gemini, supports interrupt). See README.md in this directory.
//
// Planted bug: output after an interrupt is enqueued on a closed stream.
// Each turn's events go through an output stream object. On `interrupt` the
// adapter sends the CLI SIGINT (to its process group: the CLI runs detached),
// writes turn_end ok:false and closes the
// turn's stream; the CLI's stdout listener stays attached, so any line the
// CLI writes after that is enqueued on the closed stream, which throws
// "Invalid state: Controller is already closed" from the data handler: an
// uncaught exception that crashes the adapter (exit 1, no end record).
// Against a CLI that stops writing at once on SIGINT (codex and gemini as
// recorded) it works; against one that goes on writing after SIGINT it
// crashes.
//
// How the real thing looks: AI SDK providers built on a web ReadableStream:
// the abort handler calls controller.close() (or the stream is cancelled)
// while the child's 'data' listener still calls controller.enqueue(), and
// ReadableStreamDefaultController.enqueue on a closed stream throws
// TypeError [ERR_INVALID_STATE]: Invalid state: Controller is already
// closed. Thrown from an event handler, it is an uncaughtException. The
// stream here is a minimal stand-in with the same rule, so the crash does
// not depend on the timing of a real ReadableStream's reader.
//
// Everything else follows conformance/HARNESS.md: hello first, the CLI's
// JSON lines handed on re-serialised (JSON.stringify), one turn_end per
// turn, end last, exit 0 after close. After the interrupt it waits for the
// CLI to exit (SIGTERM 2 s after the SIGINT, SIGKILL 2 s after that);
// `close` during a turn interrupts it the same way first. A `send` resumes
// the session in a new process (codex exec resume ID / gemini --resume ID).

import { Adapter, record, write } from './_harness.mjs';

// OutputStream is the turn's event stream: enqueue hands an event to the
// caller; after close, enqueue throws, as ReadableStreamDefaultController
// does.
class OutputStream {
  #closed = false;
  enqueue(event) {
    if (this.#closed) throw new Error('Invalid state: Controller is already closed');
    write(event);
  }
  close() {
    this.#closed = true;
  }
}

class ClosedStream extends Adapter {
  turnState() {
    return { stream: new OutputStream() };
  }

  event(t, obj) {
    this.observe(t, obj);
    t.stream.enqueue(obj); // the bug: throws once the stream is closed
  }

  exited(t, code, signal) {
    t.timers.forEach(clearTimeout);
    if (!t.interrupted) {
      this.report(this.failure(t, code, signal));
      t.stream.close();
    }
    this.next();
  }

  // interrupt: SIGINT, the turn reported and its stream closed at once; the
  // process is still waited for, with SIGTERM and SIGKILL if it lingers.
  interrupt(why) {
    if (!super.interrupt(why)) return false;
    record('turn_end', { ok: false, error: why, session_id: this.session.id || '' });
    this.turn.stream.close();
    return true;
  }
}

const adapter = new ClosedStream({ name: 'closed-stream', agents: ['codex', 'gemini'], supports: ['interrupt'], groupSignals: true });
process.on('SIGINT', () => adapter.interrupt('interrupted'));
adapter.serve();
