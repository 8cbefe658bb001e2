#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around @steipete/claude-code-mcp,
// an MCP server whose claude_code tool runs `claude
// --dangerously-skip-permissions -p PROMPT` (text output) in the call's
// workFolder and returns its stdout. The driver is the MCP client
// (../lib/mcp.mjs): one tools/call per turn, the tool result handed on as
// it came (profile "native"), or with `--profile unified` the result's text
// as the assistant's answer. See ../README.md.

import { binScript, callerOptions } from '../lib/harness.mjs';
import { runMcpDriver } from '../lib/mcp.mjs';

const PKG = '@steipete/claude-code-mcp';

await runMcpDriver({
  name: 'claude-code-mcp',
  pkg: PKG,
  agent: 'claude',
  // One-shot calls with --dangerously-skip-permissions: no session to
  // continue, none to resume, no permission question. interrupt: the MCP
  // client's cancellation of the call.
  supports: ['interrupt'],
  script: binScript(PKG, 'dist/server.js'),
  // CLAUDE_CLI_NAME (an absolute path) is the server's documented way to
  // name the CLI; without it, ~/.claude/local/claude, then PATH.
  env: () => {
    const exe = process.env.CLAUDE_CODE_EXECUTABLE || process.env.AGENTCONFORM_CLAUDE;
    return exe ? { CLAUDE_CLI_NAME: exe } : {};
  },
  tool: 'claude_code',
  args: (cmd, prompt) => {
    const a = { prompt, workFolder: cmd.cwd || process.cwd() };
    return Object.assign(a, callerOptions(cmd));
  },
});
