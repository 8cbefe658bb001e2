#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around
// @zed-industries/claude-agent-acp, an Agent Client Protocol (ACP) agent
// that runs Claude Code through the Claude Agent SDK. The driver is the ACP
// client (the editor): it starts the agent as a child process (`node <the
// package's bin file>`), speaks ACP JSON-RPC over its stdio with the
// official client library (@agentclientprotocol/sdk, ClientSideConnection),
// and hands the runner what the client got: every session/update
// notification's params and each session/prompt response, as one JSON line
// each (profile "native"). See ../README.md.

import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';

import { ClientSideConnection, PROTOCOL_VERSION, ndJsonStream } from '@agentclientprotocol/sdk';

import { binScript, callerDelay, callerOptions, errorText, finish, hello, log, packageVersion, serve, turnEnd, write } from '../lib/harness.mjs';

const PKG = '@zed-industries/claude-agent-acp';
const CLIENT = '@agentclientprotocol/sdk';

// How long close waits for the agent to exit once its stdin is closed, and
// again after SIGTERM, before SIGKILL.
const GRACE_MS = 2000;

hello({ name: 'claude-agent-acp', pkg: PKG, agents: ['claude'], supports: ['multi_turn', 'resume', 'interrupt', 'permission', 'permission_delay'] });

let child = null; // the agent process
let exited = null; // resolves to a description of the agent's exit
let exitedWith = ''; // set once the agent has exited
let conn = null; // the ClientSideConnection
let sessionId = '';
let permission = '';
let startCmd = null; // the start command: the caller's permission delay
let turn = null; // the last turn's promise
let turnRunning = false; // a turn is running (its turn_end not written)

// rpcError renders what a request rejected with: a JSON-RPC error object
// ({code, message, data}) or an Error.
function rpcError(err) {
  if (err && typeof err === 'object' && !(err instanceof Error) && typeof err.message === 'string') {
    let text = err.message;
    if (err.data !== undefined && err.data !== null) text += ` (${JSON.stringify(err.data)})`;
    return text;
  }
  return errorText(err);
}

// whileAlive settles as p does, or rejects once the agent has exited: the
// client library leaves a request pending when the stream ends (README.md).
function whileAlive(p) {
  return Promise.race([
    p,
    exited.then((how) => {
      throw new Error(`the agent exited (${how}) before it answered`);
    }),
  ]);
}

// pickOption is the option of the permission request that answers the
// harness policy: allow → an allow option, anything else → a reject one
// (once before always, as a person deciding this one call would).
function pickOption(options, policy) {
  const kinds = policy === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
  for (const kind of kinds) {
    const o = options.find((opt) => opt && opt.kind === kind);
    if (o) return o;
  }
  return null;
}

// The ACP client: what the agent may ask of the editor.
const client = {
  async sessionUpdate(params) {
    write(params);
  },
  async requestPermission(params) {
    await callerDelay(startCmd); // the caller takes its time to decide
    const opt = pickOption(params.options ?? [], permission);
    const title = params.toolCall?.title ?? params.toolCall?.toolCallId ?? '';
    if (!opt) {
      log(`permission for ${title}: no option answers ${permission || 'deny'}; cancelled`);
      return { outcome: { outcome: 'cancelled' } };
    }
    log(`permission for ${title}: ${opt.optionId} (${opt.kind})`);
    return { outcome: { outcome: 'selected', optionId: opt.optionId } };
  },
};

function startAgent(cmd) {
  const exe = process.env.CLAUDE_CODE_EXECUTABLE || process.env.AGENTCONFORM_CLAUDE;
  if (!exe) {
    // Without CLAUDE_CODE_EXECUTABLE the agent runs the Claude Code bundled
    // with its Claude Agent SDK (cli.js): the real CLI.
    throw new Error('neither CLAUDE_CODE_EXECUTABLE nor AGENTCONFORM_CLAUDE is set: the agent would run its bundled Claude Code');
  }
  child = spawn(process.execPath, [binScript(PKG, 'dist/index.js')], {
    cwd: cmd.cwd || process.cwd(),
    // The agent passes its whole environment on to the CLI
    // (dist/acp-agent.js:957-963) and reads CLAUDE_CODE_EXECUTABLE from it
    // (:976-977).
    env: { ...process.env, CLAUDE_CODE_EXECUTABLE: exe },
    stdio: ['pipe', 'pipe', 'inherit'], // the agent's (and its CLI's) stderr: the wire log
  });
  exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      exitedWith = signal ? `signal ${signal}` : `code ${code}`;
      log('the agent exited:', exitedWith);
      resolve(exitedWith);
    });
    child.on('error', (err) => {
      exitedWith = `spawn failed: ${errorText(err)}`;
      log('the agent failed:', exitedWith);
      resolve(exitedWith);
    });
  });
  child.stdin.on('error', (err) => log('the agent stdin:', errorText(err)));
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  conn = new ClientSideConnection(() => client, stream);
}

function endTurn(ok, error) {
  turnRunning = false;
  turnEnd(ok, error, sessionId);
}

// prompt runs one turn: session/prompt with the text, the response handed
// on as it came. ok is stopReason end_turn.
async function prompt(text) {
  try {
    const resp = await whileAlive(conn.prompt({ sessionId, prompt: [{ type: 'text', text }] }));
    write(resp);
    const ok = resp?.stopReason === 'end_turn';
    endTurn(ok, ok ? '' : `stopReason ${resp?.stopReason}`);
  } catch (err) {
    log('session/prompt failed:', rpcError(err));
    endTurn(false, rpcError(err));
  }
}

// start: initialize, session/new (or the unstable session/resume), the
// model if asked for, then the first turn.
async function start(cmd) {
  permission = cmd.permission || '';
  startCmd = cmd;
  try {
    startAgent(cmd);
    const init = await whileAlive(
      conn.initialize({
        protocolVersion: PROTOCOL_VERSION,
        clientInfo: { name: 'agentconform-driver', version: packageVersion(CLIENT) },
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      }),
    );
    log('initialize:', JSON.stringify(init));
    const cwd = cmd.cwd || process.cwd();
    const params = { cwd, mcpServers: [] };
    // options: the agent's documented _meta.claudeCode.options (Claude
    // Agent SDK options, dist/acp-agent.js:936-956).
    const options = callerOptions(cmd);
    if (options) params._meta = { claudeCode: { options } };
    let session;
    if (cmd.resume) {
      session = await whileAlive(conn.unstable_resumeSession({ ...params, sessionId: cmd.resume }));
      sessionId = cmd.resume;
    } else {
      session = await whileAlive(conn.newSession(params));
      sessionId = session.sessionId;
    }
    log('session:', sessionId);
    if (cmd.model) {
      await whileAlive(conn.setSessionConfigOption({ sessionId, configId: 'model', value: cmd.model }));
    }
  } catch (err) {
    log('starting the session failed:', rpcError(err));
    endTurn(false, rpcError(err));
    return;
  }
  // The prompt request goes out first, then a cancel the caller sent
  // while the session was being made (session/cancel names a session).
  const turnDone = prompt(cmd.prompt ?? '');
  if (interruptPending) {
    interruptPending = false;
    interrupt();
  }
  await turnDone;
}

// interruptPending is an interrupt that came while the session was being
// made, before there was a session to cancel.
let interruptPending = false;

// interrupt: session/cancel, a notification; the running prompt then
// answers with stopReason cancelled.
function interrupt() {
  if (conn && !sessionId && turnRunning && !exitedWith) {
    log('interrupt: the session is being made; cancelling once it is');
    interruptPending = true;
    return;
  }
  if (!conn || !sessionId || exitedWith) {
    log('interrupt: no running session; ignored');
    return;
  }
  conn.cancel({ sessionId }).catch((err) => log('session/cancel failed:', rpcError(err)));
}

process.on('SIGINT', interrupt);

// stopAgent closes the agent's stdin (the end of the ACP stream) and waits
// for it to exit; SIGTERM after a grace, SIGKILL after another.
async function stopAgent() {
  if (!child || exitedWith) return;
  const wait = (ms) => Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), ms))]);
  child.stdin.end();
  if (await wait(GRACE_MS)) return;
  log(`the agent did not exit within ${GRACE_MS} ms of its stdin closing: SIGTERM`);
  child.kill('SIGTERM');
  if (await wait(GRACE_MS)) return;
  log('the agent did not exit on SIGTERM: SIGKILL');
  child.kill('SIGKILL');
  await exited;
}

await serve({
  start(cmd) {
    if (cmd.agent && cmd.agent !== 'claude') {
      endTurn(false, `this driver drives claude, not ${cmd.agent}`);
      return;
    }
    turnRunning = true;
    turn = start(cmd);
  },
  async send(cmd) {
    if (turn) await turn;
    if (!conn || !sessionId || exitedWith) {
      endTurn(false, exitedWith ? `the agent exited (${exitedWith})` : 'no session to send to');
      return;
    }
    turnRunning = true;
    turn = prompt(cmd.prompt ?? '');
  },
  interrupt,
  async close() {
    const during = turnRunning;
    if (during) {
      // close during a turn: the caller is gone. Cancel the turn, then
      // end the agent; the turn ends with what the agent answers, or
      // with its exit.
      log('close during a turn: session/cancel, then ending the agent');
      interrupt();
      const settled = await Promise.race([turn.then(() => true), new Promise((r) => setTimeout(() => r(false), GRACE_MS))]);
      if (!settled) log('the turn did not end after session/cancel');
    }
    await stopAgent();
    if (turn) await turn;
    if (during) finish(false, 'closed during a turn');
    else finish(true);
  },
});
