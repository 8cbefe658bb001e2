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
export async function* commands() {
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
  yield { op: 'close', eof: true };
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
