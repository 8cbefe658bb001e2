// _harness.mjs: what the Node test adapters in this directory share; not an
// adapter itself. See README.md in this directory.
//
// The harness side of conformance/HARNESS.md: JSON lines to stdout (write,
// record), notes to stderr (log), the end record and exit (finish). The CLI
// side: the executables (CODEX_EXECUTABLE, CLAUDE_CODE_EXECUTABLE,
// GEMINI_EXECUTABLE, else on PATH) and their argv. Adapter is a session
// that runs the CLI once per turn and reads the runner's commands from
// stdin (serve); its methods do what a correct adapter does, and an adapter
// extends it where it does otherwise (its planted bug, or its unusual
// behaviour). An adapter imports it relatively:
//
//     import { Adapter, log, record, write } from './_harness.mjs';

import { spawn } from 'node:child_process';
import readline from 'node:readline';

let NAME = 'adapter'; // log's prefix; Adapter sets it

export function write(obj) {
  // Writes to a pipe are synchronous in Node on Linux: a line written is
  // a line the runner gets, even if the process exits right after.
  process.stdout.write(JSON.stringify(obj) + '\n');
}
export function record(kind, fields = {}) {
  write({ agentconform: kind, ...fields });
}
export function log(...parts) {
  process.stderr.write(`[${NAME}] ${parts.join(' ')}\n`);
}

// finish writes the end record and exits 0 once stdout has taken it.
export function finish() {
  record('end', { ok: true });
  process.stdout.write('', () => process.exit(0));
}

const ENV = { codex: 'CODEX_EXECUTABLE', gemini: 'GEMINI_EXECUTABLE', claude: 'CLAUDE_CODE_EXECUTABLE' };

export function executable(agent) {
  return process.env[ENV[agent]] || agent;
}

// cliArgs is one streaming turn: codex exec --json, gemini -o stream-json,
// claude -p stream-json (with the caller's turn limit, when it set one).
export function cliArgs(agent, prompt, permission, resume, maxTurns) {
  if (agent === 'codex') {
    const args = ['exec', '--json', '--skip-git-repo-check', '-s', permission === 'deny' ? 'read-only' : 'workspace-write'];
    if (resume) args.push('resume', resume);
    args.push(prompt);
    return args;
  }
  if (agent === 'gemini') {
    const args = ['-p', prompt, '-o', 'stream-json'];
    if (permission === 'allow') args.push('-y');
    if (permission === 'deny') args.push('--approval-mode', 'default');
    if (resume) args.push('--resume', resume);
    return args;
  }
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  if (resume) args.push(`--resume=${resume}`);
  if (maxTurns) args.push('--max-turns', String(maxTurns));
  args.push(prompt);
  return args;
}

export function running(child) {
  return child.exitCode === null && child.signalCode === null;
}

export class Adapter {
  session = null; // {agent, cwd, permission, id}
  turn = null; // the running turn: {child, terminal, error, spawnError, interrupted, timers, ...turnState()}
  pending = []; // prompts sent while a turn ran
  closing = false;
  interruptIgnored = 'interrupt: no running turn; ignored'; // logged when the interrupt op finds nothing to do

  // Writes the hello.
  // groupSignals starts the CLI detached (a session of its own) and signals
  // its process group, so that a CLI behind its npm launcher (Gemini's
  // ignores signals) gets them; the default is the pid alone, as most
  // wrappers do.
  constructor({ name, agents, supports, groupSignals = false }) {
    NAME = name;
    this.groupSignals = groupSignals;
    this.name = name;
    this.agents = agents;
    record('hello', { profile: 'native', agents, supports, name, version: '1' });
  }

  // serve reads the runner's commands; stdin's end without close is a close.
  serve() {
    const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    rl.on('line', (line) => {
      if (this.closing || !line.trim()) return;
      let cmd;
      try {
        cmd = JSON.parse(line);
      } catch {
        log('ignoring a command that is not JSON');
        return;
      }
      switch (cmd?.op) {
        case 'start':
          this.start(cmd);
          return;
        case 'send':
          this.send(cmd);
          return;
        case 'interrupt':
          if (!this.interrupt('interrupted')) log(this.interruptIgnored);
          return;
        case 'close':
          this.close();
          return;
        default:
          log(`unknown op ${JSON.stringify(cmd?.op)}; ignored`);
      }
    });
    rl.on('close', () => {
      if (!this.closing) {
        log('stdin ended without close; closing');
        this.close();
      }
    });
  }

  start(cmd) {
    if (this.session) {
      log('start: a session is already running; ignored');
      return;
    }
    if (!this.agents.includes(cmd.agent)) {
      record('turn_end', { ok: false, error: `${this.name} drives ${this.agents.join(' and ')}, not ${cmd.agent}`, session_id: '' });
      return;
    }
    this.session = { agent: cmd.agent, cwd: cmd.cwd, permission: cmd.permission, id: cmd.resume || null, maxTurns: cmd.max_turns || 0 };
    this.runTurn(cmd.prompt ?? '');
  }

  send(cmd) {
    if (!this.session) {
      record('turn_end', { ok: false, error: 'send before start', session_id: '' });
      return;
    }
    if (this.turn) this.pending.push(cmd.prompt ?? '');
    else this.runTurn(cmd.prompt ?? '');
  }

  // turnState is what an adapter keeps of a turn besides what all keep.
  turnState() {
    return {};
  }

  // runTurn starts the CLI for one turn, stdin /dev/null: each stdout line
  // goes to line(), and exited() follows once the CLI has exited and its
  // output is read.
  runTurn(prompt) {
    const s = this.session;
    const child = spawn(executable(s.agent), cliArgs(s.agent, prompt, s.permission, s.id, s.maxTurns), {
      cwd: s.cwd || process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: this.groupSignals,
    });
    const t = { child, group: this.groupSignals, terminal: false, error: '', spawnError: null, interrupted: '', timers: [], ...this.turnState() };
    this.turn = t;
    const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
    rl.on('line', (line) => this.line(t, line));
    child.on('error', (err) => {
      t.spawnError = err;
    });
    child.on('close', (code, signal) => this.exited(t, code, signal));
  }

  line(t, line) {
    let obj;
    try {
      obj = JSON.parse(line);
    } catch {
      log('skipping a line that is not JSON:', line.slice(0, 120));
      return;
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return;
    this.event(t, obj);
  }

  // event: a CLI event, noted and handed on.
  event(t, obj) {
    this.observe(t, obj);
    write(obj);
  }

  // observe notes the session id and the turn's outcome from a CLI event.
  observe(t, obj) {
    const s = this.session;
    const type = obj.type;
    if (s.agent === 'codex') {
      if (type === 'thread.started' && typeof obj.thread_id === 'string') s.id = obj.thread_id;
      if (type === 'turn.completed') t.terminal = true;
      if (type === 'turn.failed') {
        t.terminal = true;
        t.error = obj.error?.message || 'turn failed';
      }
    } else if (s.agent === 'gemini') {
      if (type === 'init' && typeof obj.session_id === 'string') s.id = obj.session_id;
      if (type === 'result') {
        t.terminal = true;
        if (obj.status !== 'success') t.error = obj.error?.message || `result status ${obj.status}`;
      }
    } else {
      if (type === 'system' && obj.subtype === 'init' && typeof obj.session_id === 'string') s.id = obj.session_id;
      if (type === 'result') {
        t.terminal = true;
        if (obj.is_error) {
          t.error = (Array.isArray(obj.errors) && obj.errors.length ? obj.errors.join('; ') : '') || String(obj.result || obj.subtype || 'error result');
        }
      }
    }
  }

  // exited reports the turn once its CLI has exited, then runs the next.
  exited(t, code, signal) {
    t.timers.forEach(clearTimeout);
    this.report(this.failure(t, code, signal));
    this.next();
  }

  // failure is why the turn failed, '' if it did not.
  failure(t, code, signal) {
    const agent = this.session.agent;
    if (t.spawnError) return `starting ${agent}: ${t.spawnError.message}`;
    if (t.interrupted) return t.interrupted;
    if (t.error) return t.error;
    if (signal) return `${agent} was killed by ${signal}`;
    if (code !== 0) return `${agent} exited with code ${code}`;
    if (!t.terminal) return `${agent} exited without its terminal event`;
    return '';
  }

  report(error) {
    const fields = { ok: !error, session_id: this.session.id || '' };
    if (error) fields.error = error;
    record('turn_end', fields);
  }

  next() {
    this.turn = null;
    if (this.closing) finish();
    else if (this.pending.length > 0) this.runTurn(this.pending.shift());
  }

  // interrupt: SIGINT, then SIGTERM 2 s later and SIGKILL 2 s after that
  // while the CLI runs; exited() reports the turn. False if there was
  // nothing to interrupt.
  interrupt(why) {
    const t = this.turn;
    if (!t || t.interrupted) return false;
    t.interrupted = why;
    const kill = (sig) => {
      if (!running(t.child)) return;
      if (!t.group) {
        t.child.kill(sig);
        return;
      }
      try {
        process.kill(-t.child.pid, sig);
      } catch (err) {
        if (err.code !== 'ESRCH') log(`kill -${sig} ${t.child.pid}:`, err.message);
      }
    };
    kill('SIGINT');
    t.timers.push(
      setTimeout(() => kill('SIGTERM'), 2000),
      setTimeout(() => kill('SIGKILL'), 4000),
    );
    return true;
  }

  close() {
    this.closing = true;
    this.pending.length = 0;
    if (!this.turn) {
      finish();
      return;
    }
    // The caller is gone while the turn runs: interrupt it (no-op if it was
    // interrupted already or has exited); exited() finishes once the CLI has
    // exited.
    if (running(this.turn.child)) this.interrupt('closed during the turn');
  }
}
