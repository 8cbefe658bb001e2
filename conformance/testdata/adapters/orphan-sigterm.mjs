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

import { spawn } from 'node:child_process';
import readline from 'node:readline';

const NAME = 'orphan-sigterm';

function write(obj) {
  // Writes to a pipe are synchronous in Node on Linux: a line written is
  // a line the runner gets, even if the process exits right after.
  process.stdout.write(JSON.stringify(obj) + '\n');
}
function record(kind, fields = {}) {
  write({ agentconform: kind, ...fields });
}
function log(...parts) {
  process.stderr.write(`[${NAME}] ${parts.join(' ')}\n`);
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
let turn = null; // the running turn
const pending = []; // prompts sent while a turn ran

function runTurn(prompt) {
  const args = cliArgs(session.agent, prompt, session.permission, session.id);
  const child = spawn(EXE[session.agent](), args, {
    cwd: session.cwd || process.cwd(),
    // stdin /dev/null: codex and gemini read stdin to EOF before they start.
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const t = { child, terminal: false, error: '', spawnError: null, forgotten: false };
  turn = t;
  const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
  rl.on('line', (line) => {
    if (t.forgotten) return; // aborted: nobody listens any more
    let obj;
    try {
      obj = JSON.parse(line);
    } catch {
      log('skipping a line that is not JSON:', line.slice(0, 120));
      return;
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return;
    observe(t, obj);
    write(obj);
  });
  child.on('error', (err) => {
    t.spawnError = err;
  });
  child.on('close', (code, signal) => {
    if (t.forgotten) return;
    let ok = code === 0 && t.terminal && !t.error;
    let error = '';
    if (t.spawnError) error = `starting ${session.agent}: ${t.spawnError.message}`;
    else if (t.error) error = t.error;
    else if (signal) error = `${session.agent} was killed by ${signal}`;
    else if (code !== 0) error = `${session.agent} exited with code ${code}`;
    else if (!t.terminal) error = `${session.agent} exited without its terminal event`;
    if (error) ok = false;
    const fields = { ok, session_id: session.id || '' };
    if (!ok) fields.error = error;
    record('turn_end', fields);
    turnDone();
  });
}

// observe notes the session id and the turn's outcome from a CLI event.
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

function turnDone() {
  turn = null;
  if (pending.length > 0) runTurn(pending.shift());
}

// abort is the bug: one SIGTERM, the turn reported as aborted at once, and
// the process forgotten (no wait, no SIGKILL later).
function abort() {
  const t = turn;
  if (!t) return false;
  t.forgotten = true;
  try {
    t.child.kill('SIGTERM');
  } catch (err) {
    log('kill:', err.message);
  }
  record('turn_end', { ok: false, error: 'aborted', session_id: session.id || '' });
  turn = null;
  return true;
}

function close() {
  pending.length = 0;
  if (turn) abort(); // the caller is gone: abort the turn the same way
  record('end', { ok: true });
  // Exit at once: nothing waits for the child.
  process.exit(0);
}

process.on('SIGINT', () => {
  if (!abort()) log('interrupt: no running turn; ignored');
});

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let closed = false;
rl.on('line', (line) => {
  if (closed || !line.trim()) return;
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
      if (!abort()) log('interrupt: no running turn; ignored');
      return;
    case 'close':
      closed = true;
      close();
      return;
    default:
      log(`unknown op ${JSON.stringify(cmd?.op)}; ignored`);
  }
});
rl.on('close', () => {
  if (!closed) {
    closed = true;
    log('stdin ended without close; closing');
    close();
  }
});
