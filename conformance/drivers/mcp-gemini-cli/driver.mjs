#!/usr/bin/env node
// A harness driver (conformance/HARNESS.md) around @choplin/mcp-gemini-cli,
// an MCP server whose geminiChat tool runs `gemini -p PROMPT [-m MODEL]`
// (text output) and returns its stdout. The driver is the MCP client
// (../lib/mcp.mjs): one tools/call per turn, the tool result handed on as
// it came (profile "native"), or with `--profile unified` the result's text
// as the assistant's answer. See ../README.md.

import { binScript, callerOptions } from '../lib/harness.mjs';
import { runMcpDriver } from '../lib/mcp.mjs';

const PKG = '@choplin/mcp-gemini-cli';

await runMcpDriver({
  name: 'mcp-gemini-cli',
  pkg: PKG,
  agent: 'gemini',
  // One-shot calls: no session to continue, none to resume, no permission
  // question (the tool's yolo is the model's to set). interrupt: the MCP
  // client's cancellation of the call.
  supports: ['interrupt'],
  script: binScript(PKG, 'dist/index.js'),
  // The server finds `gemini` with `which gemini` (PATH) and has no
  // setting for it.
  tool: 'geminiChat',
  args: (cmd, prompt) => {
    const a = { prompt };
    if (cmd.model) a.model = cmd.model;
    return Object.assign(a, callerOptions(cmd));
  },
});
