// The MCP client side of the drivers around third-party MCP servers that
// wrap a CLI (../README.md, "zoo"). The driver is the MCP host: it starts
// the server as a child process with @modelcontextprotocol/sdk's
// StdioClientTransport, lists nothing and configures nothing beyond what a
// host's server entry holds (command, args, env, cwd), calls the server's
// tool once per turn with the prompt, and hands the runner what the client
// got: every progress notification of the call and the tool result, each
// as one JSON line (profile "native"). With `--profile unified` the driver
// is a host that shows the tool result's text as the assistant's answer:
// one textChunk per call, then turnCompleted (an error result's text as a
// notice), sessionEnded at close; progress notifications are not shown.
// Interrupting is what an MCP client
// does: aborting the call's AbortSignal, which makes the client send
// notifications/cancelled and reject the call at once. Closing is
// Client.close(): the transport ends the server's stdin, then SIGTERM,
// then SIGKILL, 2 s apart.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { Turns, errorText, hello, log, profileArg, serveTurns, turnEnd, write } from './harness.mjs';
import { UnifiedEvents } from './unified.mjs';

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
  const profile = profileArg();
  hello({ name: spec.name, pkg: spec.pkg, agents: [spec.agent], supports: spec.supports, profile });
  let unified = null; // the unified events, in the unified profile
  let last = { reason: 'completed', error: '' }; // the last turn's outcome, for sessionEnded

  let client = null;
  let startCmd = null;
  let n = 0; // turns started
  let sessionId = '';
  const turns = new Turns('the tool call');

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

  // runTurn calls the tool once; its progress notifications and its result
  // are the turn's events.
  function runTurn(prompt) {
    const turn = n++;
    let shown = false; // the turn's result shown (unified)
    turns.run(
      async (signal) => {
        if (!client) client = await connect(startCmd);
        const result = await client.callTool({ name: spec.tool, arguments: spec.args(startCmd, prompt, turn) }, undefined, {
          signal,
          onprogress: (p) => {
            if (!unified) write({ method: 'notifications/progress', params: p });
          },
        });
        const sid = spec.sessionOf ? spec.sessionOf(result) : '';
        if (sid) sessionId = sid;
        if (unified) {
          unified.sessionId = sessionId;
          unified.text(resultText(result), result.isError === true ? null : 'assistant');
          unified.emit('turnCompleted');
          shown = true;
        } else {
          write(result);
        }
        if (result.isError === true) return { ok: false, error: resultText(result) || 'the tool result is an error' };
        return { ok: true };
      },
      () => sessionId,
      (ok, error, aborted) => {
        if (unified && !shown) {
          // The call threw: the host shows the error as a notice.
          unified.text(error, null);
          unified.emit('turnCompleted');
        }
        last = ok ? { reason: 'completed', error: '' } : { reason: aborted ? 'cancelled' : 'failed', error };
      },
    );
  }

  // interrupt: the MCP client's cancellation (notifications/cancelled with
  // the reason), and the call rejects at once.
  await serveTurns({
    start(cmd) {
      if (cmd.agent && cmd.agent !== spec.agent) {
        turnEnd(false, `this driver drives ${spec.agent}, not ${cmd.agent}`, '');
        startCmd = { ...cmd, refused: true };
        return;
      }
      startCmd = cmd;
      if (profile === 'unified') unified = new UnifiedEvents(spec.agent, cmd.cwd || process.cwd());
      runTurn(cmd.prompt ?? '');
    },
    turns,
    ready: () => startCmd !== null && !startCmd.refused,
    runTurn,
    reasons: { interrupt: new Error('interrupted by the caller'), close: new Error('the caller closed the session') },
    async closed() {
      if (unified) unified.sessionEnded(last.reason, last.error);
      if (!client) return;
      try {
        await client.close();
      } catch (err) {
        log('closing the client failed:', errorText(err));
      }
    },
  });
}
