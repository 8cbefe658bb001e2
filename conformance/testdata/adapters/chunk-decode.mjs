#!/usr/bin/env node
// chunk-decode.mjs: a BUGGY test adapter (profile native, agents codex,
// gemini and claude, no capabilities). See README.md in this directory.
//
// Planted bug: each read of the CLI's stdout is decoded by itself. The
// adapter keeps a string buffer and appends `chunk.toString()` for every
// 'data' event, then cuts lines at '\n'. Lines that span reads come out
// whole (the buffer carries the rest over), but a multibyte UTF-8
// character whose bytes span two reads is decoded as two halves, each
// U+FFFD: the text the caller gets is corrupted, while the JSON still
// parses and the turn looks fine.
//
// How the real thing looks: `proc.stdout.on('data', (d) => { buffer +=
// d.toString(); ... })` in CLI wrappers and AI SDK providers, instead of
// `setEncoding('utf8')`, a StringDecoder or readline (which keep the
// bytes of an unfinished character for the next chunk).
//
// Everything else follows conformance/HARNESS.md: hello first, the CLI's
// JSON lines handed on re-serialised (JSON.stringify), one turn_end per
// turn, end last, exit 0 after close. Claude runs in print mode; a `send`
// resumes the session in a new process.

import { spawn } from 'node:child_process';
import { Adapter, cliArgs, executable } from './_harness.mjs';

class ChunkDecode extends Adapter {
  runTurn(prompt) {
    const s = this.session;
    const child = spawn(executable(s.agent), cliArgs(s.agent, prompt, s.permission, s.id), {
      cwd: s.cwd || process.cwd(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const t = { child, terminal: false, error: '', spawnError: null, interrupted: '', timers: [], ...this.turnState() };
    this.turn = t;
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk.toString(); // the bug: a character split across chunks becomes two U+FFFD
      let i;
      while ((i = buffer.indexOf('\n')) >= 0) {
        this.line(t, buffer.slice(0, i).replace(/\r$/, ''));
        buffer = buffer.slice(i + 1);
      }
    });
    child.stdout.on('end', () => {
      if (buffer.trim()) this.line(t, buffer);
      buffer = '';
    });
    child.on('error', (err) => {
      t.spawnError = err;
    });
    child.on('close', (code, signal) => this.exited(t, code, signal));
  }
}

new ChunkDecode({ name: 'chunk-decode', agents: ['codex', 'gemini', 'claude'], supports: [] }).serve();
