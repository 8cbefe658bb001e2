#!/usr/bin/env node
// native-reserialise.mjs: a CORRECT but unusual test adapter (profile native,
// agents codex and claude, supports interrupt). See README.md in this
// directory.
//
// It hands on every event the CLI wrote, in order, but re-serialised the way
// a typed SDK does it, and with events of its own:
//
// - every key whose value is null, "" or an empty array is left out, at any
//   depth (what Go structs with `json:",omitempty"` tags write back after
//   decoding an event: exit_code null, aggregated_output "", stop_reason
//   null, mcp_servers [] all disappear; false and 0 stay, as pointer fields
//   keep them);
// - {"type":"adapter.turn_started"} before the first CLI event of a turn,
//   and {"type":"adapter.stats","lines":N} after its last, N being the number
//   of CLI events handed on in the turn (SDKs add their own lifecycle events
//   to the stream: the Go and Rust Codex SDKs' turn wrappers, the TypeScript
//   Claude SDK's own "system" messages).
//
// Nothing the CLI said with a value is lost, and nothing is invented about
// the conversation; a caller reading these events learns all the CLI told.
//
// Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
// turn, end last, exit 0 after close. Codex: one `codex exec --json` per
// turn (a `send` resumes the thread). Claude: print mode, `claude -p
// --output-format stream-json --verbose PROMPT`, stdin closed, one process
// per turn (a `send` resumes with --resume=ID); `multi_turn` is not
// declared. Interrupt: SIGINT for both (Codex stops; Claude in print mode
// ends the turn with an error result and exits 0), then SIGTERM 2 s later
// and SIGKILL 2 s after that if the CLI has not exited; the adapter always
// waits for the CLI to exit before it reports the turn. `close` during a
// turn stops it the same way.

import { spawn } from 'node:child_process';
import readline from 'node:readline';

const NAME = 'native-reserialise';

function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}
function record(kind, fields = {}) {
  write({ agentconform: kind, ...fields });
}
function log(...parts) {
  process.stderr.write(`[${NAME}] ${parts.join(' ')}\n`);
}

// omitEmpty drops the keys whose value is null, "" or [] at every depth.
function omitEmpty(v) {
  if (Array.isArray(v)) return v.map(omitEmpty);
  if (v === null || typeof v !== 'object') return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === '' || (Array.isArray(x) && x.length === 0)) continue;
    out[k] = omitEmpty(x);
  }
  return out;
}

record('hello', { profile: 'native', agents: ['codex', 'claude'], supports: ['interrupt'], name: NAME, version: '1' });

const EXE = {
  codex: () => process.env.CODEX_EXECUTABLE || 'codex',
  claude: () => process.env.CLAUDE_CODE_EXECUTABLE || 'claude',
};

function cliArgs(agent, prompt, permission, resume) {
  if (agent === 'codex') {
    const args = ['exec', '--json', '--skip-git-repo-check', '-s', permission === 'deny' ? 'read-only' : 'workspace-write'];
    if (resume) args.push('resume', resume);
    args.push(prompt);
    return args;
  }
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (resume) args.push(`--resume=${resume}`);
  args.push(prompt);
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
  const t = { child, lines: 0, terminal: false, error: '', spawnError: null, interrupted: '', timers: [] };
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
    if (t.lines === 0) write({ type: 'adapter.turn_started' });
    t.lines++;
    write(omitEmpty(obj));
  });
  child.on('error', (err) => {
    t.spawnError = err;
  });
  child.on('close', (code, signal) => {
    t.timers.forEach(clearTimeout);
    write({ type: 'adapter.stats', lines: t.lines });
    let error = '';
    if (t.spawnError) error = `starting ${session.agent}: ${t.spawnError.message}`;
    else if (t.interrupted) error = t.interrupted;
    else if (t.error) error = t.error;
    else if (signal) error = `${session.agent} was killed by ${signal}`;
    else if (code !== 0) error = `${session.agent} exited with code ${code}`;
    else if (!t.terminal) error = `${session.agent} exited without its terminal event`;
    const fields = { ok: !error, session_id: session.id || '' };
    if (error) fields.error = error;
    record('turn_end', fields);
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
    if (type === 'system' && obj.subtype === 'init' && typeof obj.session_id === 'string') session.id = obj.session_id;
    if (type === 'result') {
      t.terminal = true;
      if (obj.is_error) {
        t.error = (Array.isArray(obj.errors) && obj.errors.length ? obj.errors.join('; ') : '') || String(obj.result || obj.subtype || 'error result');
      }
    }
  }
}

// stop interrupts the turn: SIGINT, then SIGTERM and SIGKILL while the
// CLI lingers. The turn is reported when the CLI has exited.
function stop(why) {
  const t = turn;
  if (!t || t.interrupted) return false;
  t.interrupted = why;
  const kill = (sig) => {
    if (t.child.exitCode === null && t.child.signalCode === null) t.child.kill(sig);
  };
  kill('SIGINT');
  t.timers.push(
    setTimeout(() => kill('SIGTERM'), 2000),
    setTimeout(() => kill('SIGKILL'), 4000),
  );
  return true;
}

function finish() {
  record('end', { ok: true });
  process.stdout.write('', () => process.exit(0));
}

process.on('SIGINT', () => stop('interrupted'));

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
      if (cmd.agent !== 'codex' && cmd.agent !== 'claude') {
        record('turn_end', { ok: false, error: `${NAME} drives codex and claude, not ${cmd.agent}`, session_id: '' });
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
      if (!stop('interrupted')) log('interrupt: no running turn (or already interrupted); ignored');
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
  // The caller is gone while the turn runs: stop the CLI (no-op if it was
  // interrupted already or has exited); the turn's 'close' handler
  // finishes.
  if (turn.child.exitCode === null && turn.child.signalCode === null) stop('closed during the turn');
}
