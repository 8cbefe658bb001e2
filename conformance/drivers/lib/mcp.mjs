// The MCP client side of the drivers around third-party MCP servers that
// wrap a CLI (../README.md, "zoo"). The driver is the MCP host: it starts
// the server as a child process with @modelcontextprotocol/sdk's
// StdioClientTransport, lists nothing and configures nothing beyond what a
// host's server entry holds (command, args, env, cwd), calls the server's
// tool once per turn with the prompt, and hands the runner what the client
// got: every progress notification of the call and the tool result, each
// as one JSON line (profile "native"). Interrupting is what an MCP client
// does: aborting the call's AbortSignal, which makes the client send
// notifications/cancelled and reject the call at once. Closing is
// Client.close(): the transport ends the server's stdin, then SIGTERM,
// then SIGKILL, 2 s apart.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { commands, errorText, finish, log, packageVersion, record, write } from './harness.mjs';

// serverScript is the file an installed package's bin entry points at.
export function serverScript(pkg, bin) {
  return new URL(import.meta.resolve(`${pkg}/package.json`)).pathname.replace(/package\.json$/, bin);
}

// resultText is the text of a tool result's text blocks.
function resultText(result) {
  if (!result || !Array.isArray(result.content)) return '';
  return result.content
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

// runMcpDriver runs one driver. spec:
//   name, pkg: the driver's name and the npm package of the server;
//   agent: the CLI it drives; supports: what the hello claims;
//   script: the server's entry file;
//   env(cmd): variables the host's server entry sets (added to ours);
//   tool: the tool called each turn;
//   args(cmd, prompt, turn): the tool's arguments;
//   sessionOf(result): the session id to report after a turn ("" if none).
export async function runMcpDriver(spec) {
  record('hello', {
    profile: 'native',
    agents: [spec.agent],
    supports: spec.supports,
    name: spec.name,
    version: packageVersion(spec.pkg),
  });

  let client = null;
  let startCmd = null;
  let turns = 0;
  let turn = null; // {abort, done}
  let sessionId = '';

  async function connect(cmd) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [spec.script],
      // A host's server entry names the environment the server gets; the
      // transport would otherwise pass on only HOME, PATH and a few more,
      // and the CLI would not get the runner's variables.
      env: { ...process.env, ...(spec.env ? spec.env(cmd) : {}) },
      cwd: cmd.cwd || process.cwd(),
      stderr: 'inherit', // the server's (and its CLI's) stderr: the wire log
    });
    const c = new Client({ name: 'agentconform-driver', version: '1' });
    await c.connect(transport);
    return c;
  }

  function runTurn(prompt) {
    const abort = new AbortController();
    const n = turns++;
    const done = (async () => {
      let ok = false;
      let error = '';
      try {
        if (!client) client = await connect(startCmd);
        const result = await client.callTool(
          { name: spec.tool, arguments: spec.args(startCmd, prompt, n) },
          undefined,
          {
            signal: abort.signal,
            onprogress: (p) => write({ method: 'notifications/progress', params: p }),
          },
        );
        write(result);
        ok = result.isError !== true;
        if (!ok) error = resultText(result) || 'the tool result is an error';
        const sid = spec.sessionOf ? spec.sessionOf(result) : '';
        if (sid) sessionId = sid;
      } catch (err) {
        ok = false;
        error = abort.signal.aborted ? `interrupted: ${errorText(err)}` : errorText(err);
        log('the tool call failed:', errorText(err));
      }
      const fields = { ok };
      if (!ok) fields.error = error;
      fields.session_id = sessionId;
      record('turn_end', fields);
      turn = null;
    })();
    turn = { abort, done };
  }

  function interrupt() {
    if (!turn) {
      log('interrupt: no running call; ignored');
      return;
    }
    turn.abort.abort(new Error('interrupted by the caller'));
  }

  process.on('SIGINT', interrupt);

  for await (const cmd of commands()) {
    switch (cmd.op) {
      case 'start':
        if (startCmd) {
          log('start: a session was already started; ignored');
          break;
        }
        if (cmd.agent && cmd.agent !== spec.agent) {
          record('turn_end', { ok: false, error: `this driver drives ${spec.agent}, not ${cmd.agent}`, session_id: '' });
          startCmd = { ...cmd, refused: true };
          break;
        }
        startCmd = cmd;
        runTurn(cmd.prompt ?? '');
        break;
      case 'send':
        if (!startCmd || startCmd.refused) {
          record('turn_end', { ok: false, error: 'no session to send to', session_id: '' });
          break;
        }
        if (turn) await turn.done;
        runTurn(cmd.prompt ?? '');
        break;
      case 'interrupt':
        interrupt();
        break;
      case 'close':
        if (cmd.eof) log('stdin ended without close; closing');
        if (turn) {
          // close during a turn: the caller is gone: cancel the call.
          log('close during a turn: cancelling the call');
          turn.abort.abort(new Error('the caller closed the session'));
          await turn.done;
        }
        if (client) {
          try {
            await client.close();
          } catch (err) {
            log('closing the client failed:', errorText(err));
          }
        }
        finish(true);
        break;
      default:
        log(`unknown op ${JSON.stringify(cmd.op)}; ignored`);
    }
  }
}
