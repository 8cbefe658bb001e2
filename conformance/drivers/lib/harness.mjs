// The harness side of a driver (conformance/HARNESS.md): commands from
// stdin, records and events to stdout. Shared by the SDK drivers.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

// write puts one JSON line on stdout. On Linux, writes to a pipe are
// synchronous in Node, so a line written is a line the runner gets, in
// order, even when the driver exits right after.
export function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// record writes a harness record ({"agentconform": kind, ...}).
export function record(kind, fields = {}) {
  write({ agentconform: kind, ...fields });
}

// hello writes the hello record of a driver around the npm package pkg:
// profile "native" (every event is what the library handed the driver)
// unless the driver says otherwise (profileArg).
export function hello({ name, pkg, agents, supports, profile = 'native' }) {
  record('hello', { profile, agents, supports, name, version: packageVersion(pkg) });
}

// profileArg is the profile a driver was asked for on its command line
// (`driver.mjs --profile unified`): "native" without one. A driver that
// has a unified mode hands on the library's view as unified events, as an
// application built on the library would show it.
export function profileArg() {
  const i = process.argv.indexOf('--profile');
  const p = i >= 0 ? process.argv[i + 1] : 'native';
  if (p !== 'native' && p !== 'unified') {
    log(`unknown profile ${JSON.stringify(p)}: native or unified`);
    process.exit(2);
  }
  return p;
}

// turnEnd writes the turn_end record of a turn, or of a command that
// started none (sessionId '').
export function turnEnd(ok, error, sessionId) {
  const fields = { ok };
  if (!ok) fields.error = error || 'turn failed';
  fields.session_id = sessionId;
  record('turn_end', fields);
}

// log writes a diagnostic line to stderr (the case's wire log; never parsed).
export function log(...parts) {
  process.stderr.write(`[driver] ${parts.join(' ')}\n`);
}

// errorText renders anything thrown as one line.
export function errorText(err) {
  if (err === undefined || err === null) return '';
  if (err instanceof Error) return err.message || String(err);
  return String(err);
}

// callerDelay waits as long as the start command says its caller takes to
// decide a permission request (permission_delay_ms, HARNESS.md: a person in
// the loop): a driver that declares permission_delay awaits it in its
// permission callback before it answers by the policy.
export function callerDelay(cmd) {
  const ms = Number(cmd?.permission_delay_ms) || 0;
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

// callerOptions is the start command's options object (adapter-specific
// settings the caller hands the library), or undefined.
export function callerOptions(cmd) {
  return cmd.options && typeof cmd.options === 'object' ? cmd.options : undefined;
}

// binScript is the file an installed package's bin entry points at.
export function binScript(pkg, bin) {
  return new URL(import.meta.resolve(`${pkg}/package.json`)).pathname.replace(/package\.json$/, bin);
}

// packageVersion reads the version of an installed package (the SDKs do not
// export their package.json).
export function packageVersion(name) {
  try {
    let dir = dirname(fileURLToPath(import.meta.resolve(name)));
    for (let i = 0; i < 4; i++) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
        if (pkg.name === name) return pkg.version;
      } catch {
        // not here: look one directory up
      }
      dir = dirname(dir);
    }
  } catch {
    // fall through
  }
  return 'unknown';
}

// commands yields the runner's commands, one parsed object per stdin line,
// and a final {op: "close", eof: true} if stdin ends without a close.
// A line that is not a JSON object with an op is reported on stderr and
// skipped.
async function* commands() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    let cmd;
    try {
      cmd = JSON.parse(line);
    } catch (err) {
      log('ignoring a command line that is not JSON:', errorText(err));
      continue;
    }
    if (cmd === null || typeof cmd !== 'object' || typeof cmd.op !== 'string') {
      log('ignoring a command without op:', line.slice(0, 200));
      continue;
    }
    yield cmd;
    if (cmd.op === 'close') return;
  }
  log('stdin ended without close; closing');
  yield { op: 'close', eof: true };
}

// serve hands each command to handlers[cmd.op], one at a time (a handler's
// promise is awaited before the next command is read), until close. A
// session has one start: a later one is reported on stderr and ignored, as
// is an op without a handler.
export async function serve(handlers) {
  let started = false;
  for await (const cmd of commands()) {
    if (cmd.op === 'start' && started) {
      log('start: a session was already started; ignored');
      continue;
    }
    if (cmd.op === 'start') started = true;
    if (Object.hasOwn(handlers, cmd.op)) await handlers[cmd.op](cmd);
    else log(`unknown op ${JSON.stringify(cmd.op)}; ignored`);
  }
}

// serveTurns serves a driver whose turns are calls on one session object
// (a provider's model, an SDK's thread), run one at a time by turns: start
// makes the object and runs the first turn; send runs the next once the
// last is over (ready says whether start made the object); interrupt, and
// SIGINT in signal mode, abort the running turn; close waits for it (a
// turn still running is aborted: the caller is gone), runs closed, and ends
// the driver. reasons.interrupt and reasons.close, when given, are what the
// turn is aborted with (an MCP client sends its reason to the server).
export async function serveTurns({ start, turns, ready, runTurn, closed, reasons = {} }) {
  const interrupt = () => turns.interrupt(reasons.interrupt);
  process.on('SIGINT', interrupt);
  await serve({
    start,
    async send(cmd) {
      if (!ready()) {
        turnEnd(false, 'no session to send to', '');
        return;
      }
      await turns.idle();
      runTurn(cmd.prompt ?? '');
    },
    interrupt,
    async close() {
      await turns.close(reasons.close);
      if (closed) await closed();
      finish(true);
    },
  });
}

// Turns runs a driver's turns one at a time, each one library call that
// takes an AbortSignal. what names the call in the log.
export class Turns {
  #current = null; // the running turn: {abort: AbortController, done: Promise}

  constructor(what) {
    this.what = what;
  }

  // run starts a turn: call(signal) is the library call, which resolves to
  // the turn's {ok, error}; a throw fails the turn with what it threw
  // ("interrupted: ..." once aborted). ended() runs when the call is over,
  // thrown or not, and returns the session id for the turn_end; outcome,
  // if given, is told the turn's ok, error and whether it was aborted,
  // before the turn_end.
  run(call, ended, outcome) {
    const abort = new AbortController();
    const done = (async () => {
      let ok = false;
      let error = '';
      try {
        ({ ok, error } = await call(abort.signal));
      } catch (err) {
        ok = false;
        error = abort.signal.aborted ? `interrupted: ${errorText(err)}` : errorText(err);
        log(`${this.what} failed:`, errorText(err));
      }
      const sid = ended();
      if (outcome) outcome(ok, error, abort.signal.aborted);
      turnEnd(ok, error, sid);
      this.#current = null;
    })();
    this.#current = { abort, done };
  }

  // idle resolves once no turn is running.
  async idle() {
    if (this.#current) await this.#current.done;
  }

  // interrupt aborts the running turn's signal (with reason, if given).
  interrupt(reason) {
    if (!this.#current) {
      log('interrupt: no running turn; ignored');
      return;
    }
    this.#current.abort.abort(reason);
  }

  // close: the caller is gone (HARNESS.md): a running turn is aborted (with
  // reason, if given) and waited for.
  async close(reason) {
    if (!this.#current) return;
    log('close during a turn: aborting it');
    this.#current.abort.abort(reason);
    await this.#current.done;
  }
}

// Inbox is an async iterable fed by push and closed by end: the streaming
// input the Claude SDK reads user messages from.
export class Inbox {
  #items = [];
  #waiting = null;
  #ended = false;

  push(item) {
    if (this.#ended) throw new Error('push after end');
    if (this.#waiting) {
      const w = this.#waiting;
      this.#waiting = null;
      w({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
  }

  end() {
    this.#ended = true;
    if (this.#waiting) {
      const w = this.#waiting;
      this.#waiting = null;
      w({ value: undefined, done: true });
    }
  }

  get ended() {
    return this.#ended;
  }

  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift(), done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiting = resolve;
        });
      },
      return: () => {
        this.#ended = true;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

// finish writes the end record and exits 0 once stdout has taken it: the
// record carries the outcome; a non-zero exit would mean the driver itself
// broke.
export function finish(ok, error) {
  const fields = { ok };
  if (!ok && error) fields.error = error;
  record('end', fields);
  process.stdout.write('', () => process.exit(0));
}
