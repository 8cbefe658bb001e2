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

import { spawn } from 'node:child_process';
import readline from 'node:readline';

import { Adapter, cliArgs, executable, log } from './_harness.mjs';

// signalGroup sends sig to the process group the child leads.
function signalGroup(child, sig) {
  try {
    process.kill(-child.pid, sig);
  } catch (err) {
    if (err.code !== 'ESRCH') log(`kill -${sig} ${child.pid}:`, err.message);
  }
}

class AwaitClose extends Adapter {
  runTurn(prompt) {
    const s = this.session;
    const child = spawn(executable(s.agent), cliArgs(s.agent, prompt, s.permission, s.id), {
      cwd: s.cwd || process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    const t = { child, terminal: false, error: '', spawnError: null, interrupted: '', timers: [], ...this.turnState() };
    this.turn = t;
    const rl = readline.createInterface({ input: child.stdout, crlfDelay: Infinity });
    rl.on('line', (line) => this.line(t, line));
    child.on('error', (err) => {
      t.spawnError = err;
    });
    child.on('close', (code, signal) => this.exited(t, code, signal));
  }

  // interrupt: the base's escalation, to the whole group, until the CLI
  // has exited.
  interrupt(why) {
    const t = this.turn;
    if (!t || t.interrupted) return false;
    t.interrupted = why;
    const exited = () => t.child.exitCode !== null || t.child.signalCode !== null;
    const kill = (sig) => {
      if (!exited()) signalGroup(t.child, sig);
    };
    kill('SIGINT');
    t.timers.push(
      setTimeout(() => kill('SIGTERM'), 2000),
      setTimeout(() => kill('SIGKILL'), 4000),
    );
    return true;
  }
}

const adapter = new AwaitClose({ name: 'await-close', agents: ['codex', 'gemini', 'claude'], supports: ['interrupt'] });
adapter.serve();
