#!/usr/bin/env node
// process-group.mjs: a CORRECT test adapter (profile native, agents codex,
// gemini and claude, supports interrupt). See README.md in this directory.
//
// It stops the CLI's whole process tree, as a CLI that is more than one
// process needs. The CLI is spawned in a process group of its own
// (detached: true, a new session) and every signal goes to that group
// (process.kill(-pid, sig)): an interrupt is SIGINT, then SIGTERM and
// SIGKILL two seconds apart, until the CLI has exited. When the CLI has
// exited (the 'exit' event), whatever is left in its group (a launcher's
// child) is killed with SIGKILL, and the rest of stdout is read for at
// most a second: a process that inherited the pipe and escaped the group
// cannot hold the turn open.
//
// How the real thing looks: wrappers that spawn with detached: true and
// kill with process.kill(-child.pid), or use a tree-kill package; Python
// ones with start_new_session=True and os.killpg.
//
// Everything else follows conformance/HARNESS.md: hello first, the CLI's
// JSON lines handed on re-serialised, one turn_end per turn, end last,
// exit 0 after close. A `send` resumes the session in a new process.

import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

import { Adapter, cliArgs, executable, log } from './_harness.mjs';

export function signalGroup(child, sig) {
  try {
    process.kill(-child.pid, sig);
  } catch (err) {
    if (err.code !== 'ESRCH') log(`kill -${sig} ${child.pid}:`, err.message);
  }
}

export class ProcessGroup extends Adapter {
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
    this.watch(t, child, rl);
  }

  // watch reports the turn once the CLI has exited: what it left in its
  // group is killed, and the rest of stdout is read for at most a second.
  watch(t, child, rl) {
    let ended = false;
    let done = null; // called once stdout has ended
    rl.on('close', () => {
      ended = true;
      if (done) done();
    });
    child.on('error', (err) => {
      t.spawnError = err;
      if (child.pid === undefined) this.exited(t, null, null);
    });
    child.on('exit', (code, signal) => {
      signalGroup(child, 'SIGKILL'); // what the CLI left in its group
      let reported = false;
      const report = () => {
        if (reported) return;
        reported = true;
        clearTimeout(grace);
        this.exited(t, code, signal);
      };
      const grace = setTimeout(() => {
        child.stdout.destroy();
        report();
      }, 1000);
      if (ended) report();
      else done = report;
    });
  }

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

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  new ProcessGroup({ name: 'process-group', agents: ['codex', 'gemini', 'claude'], supports: ['interrupt'] }).serve();
}
