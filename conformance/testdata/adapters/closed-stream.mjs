#!/usr/bin/env node
// closed-stream.mjs: a BUGGY test adapter (profile native, agents codex and
// gemini, supports interrupt). See README.md in this directory.
//
// Planted bug: output after an interrupt is enqueued on a closed stream.
// Each turn's events go through an output stream object. On `interrupt` the
// adapter sends the CLI SIGINT, writes turn_end ok:false and closes the
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

import { spawn } from 'node:child_process';
import readline from 'node:readline';

const NAME = 'closed-stream';

function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}
function record(kind, fields = {}) {
  write({ agentconform: kind, ...fields });
}
function log(...parts) {
  process.stderr.write(`[${NAME}] ${parts.join(' ')}\n`);
}

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

record('hello', { profile: 'native', agents: ['codex', 'gemini'], supports: ['interrupt'], name: NAME, version: '1' });

const EXE = {
  codex: () => process.env.CODEX_EXECUTABLE || 'codex',
  gemini: () => process.env.GEMINI_EXECUTABLE || 'gemini',
};

function cliArgs(agent, prompt, permission, resume) {
  if (agent === 'codex') {
    const args = ['exec', '--json', '--skip-git-repo-check', '-s', permission === 'deny' ? 'read-only' : 'workspace-write'];
    if (resume) args.push('resume', resume);
    args.push(prompt);
    return args;
  }
  const args = ['-p', prompt, '-o', 'stream-json'];
  if (permission === 'allow') args.push('-y');
  if (permission === 'deny') args.push('--approval-mode', 'default');
  if (resume) args.push('--resume', resume);
  return args;
}

let session = null; // {agent, cwd, permission, id}
let turn = null;
const pending = [];
let closing = false;

function runTurn(prompt) {
  const child = spawn(EXE[session.agent](), cliArgs(session.agent, prompt, session.permission, session.id), {
    cwd: session.cwd || process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const t = { child, stream: new OutputStream(), terminal: false, error: '', spawnError: null, interrupted: false, timers: [] };
  turn = t;
  const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
  rl.on('line', (line) => {
    let obj;
    try {
      obj = JSON.parse(line);
    } catch {
      log('skipping a line that is not JSON:', line.slice(0, 120));
      return;
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return;
    observe(t, obj);
    t.stream.enqueue(obj); // the bug: throws once the stream is closed
  });
  child.on('error', (err) => {
    t.spawnError = err;
  });
  child.on('close', (code, signal) => {
    t.timers.forEach(clearTimeout);
    if (!t.interrupted) {
      let error = '';
      if (t.spawnError) error = `starting ${session.agent}: ${t.spawnError.message}`;
      else if (t.error) error = t.error;
      else if (signal) error = `${session.agent} was killed by ${signal}`;
      else if (code !== 0) error = `${session.agent} exited with code ${code}`;
      else if (!t.terminal) error = `${session.agent} exited without its terminal event`;
      const fields = { ok: !error, session_id: session.id || '' };
      if (error) fields.error = error;
      record('turn_end', fields);
      t.stream.close();
    }
    turn = null;
    if (closing) finish();
    else if (pending.length > 0) runTurn(pending.shift());
  });
}

function observe(t, obj) {
  const type = obj.type;
  if (session.agent === 'codex') {
    if (type === 'thread.started' && typeof obj.thread_id === 'string') session.id = obj.thread_id;
    if (type === 'turn.completed') t.terminal = true;
    if (type === 'turn.failed') {
      t.terminal = true;
      t.error = obj.error?.message || 'turn failed';
    }
  } else {
    if (type === 'init' && typeof obj.session_id === 'string') session.id = obj.session_id;
    if (type === 'result') {
      t.terminal = true;
      if (obj.status !== 'success') t.error = obj.error?.message || `result status ${obj.status}`;
    }
  }
}

// interrupt: SIGINT, the turn reported and its stream closed at once; the
// process is still waited for, with SIGTERM and SIGKILL if it lingers.
function interrupt(why) {
  const t = turn;
  if (!t || t.interrupted) return false;
  t.interrupted = true;
  t.child.kill('SIGINT');
  t.timers.push(
    setTimeout(() => t.child.kill('SIGTERM'), 2000),
    setTimeout(() => t.child.kill('SIGKILL'), 4000),
  );
  record('turn_end', { ok: false, error: why, session_id: session.id || '' });
  t.stream.close();
  return true;
}

function finish() {
  record('end', { ok: true });
  process.stdout.write('', () => process.exit(0));
}

process.on('SIGINT', () => interrupt('interrupted'));

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (closing || !line.trim()) return;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    log('ignoring a command that is not JSON');
    return;
  }
  switch (cmd?.op) {
    case 'start':
      if (session) {
        log('start: a session is already running; ignored');
        return;
      }
      if (cmd.agent !== 'codex' && cmd.agent !== 'gemini') {
        record('turn_end', { ok: false, error: `${NAME} drives codex and gemini, not ${cmd.agent}`, session_id: '' });
        return;
      }
      session = { agent: cmd.agent, cwd: cmd.cwd, permission: cmd.permission, id: cmd.resume || null };
      runTurn(cmd.prompt ?? '');
      return;
    case 'send':
      if (!session) {
        record('turn_end', { ok: false, error: 'send before start', session_id: '' });
        return;
      }
      if (turn) pending.push(cmd.prompt ?? '');
      else runTurn(cmd.prompt ?? '');
      return;
    case 'interrupt':
      if (!interrupt('interrupted')) log('interrupt: no running turn; ignored');
      return;
    case 'close':
      close();
      return;
    default:
      log(`unknown op ${JSON.stringify(cmd?.op)}; ignored`);
  }
});
rl.on('close', () => {
  if (!closing) {
    log('stdin ended without close; closing');
    close();
  }
});

function close() {
  closing = true;
  pending.length = 0;
  if (!turn) {
    finish();
    return;
  }
  // The caller is gone while the turn runs: interrupt it (no-op if it was
  // interrupted already or has exited); the turn's 'close' handler
  // finishes once the CLI has exited.
  if (turn.child.exitCode === null && turn.child.signalCode === null) interrupt('closed during the turn');
}
