#!/usr/bin/env python3
"""A small Agent Client Protocol agent over Gemini CLI's headless stream,
for agentconform's tests of the acp profile (conformance/acptest).

It speaks ACP (JSON-RPC 2.0, one object per line) on its stdio, as an
editor expects, and runs `gemini -p PROMPT -o stream-json -y` for each
session/prompt (`--resume ID` from the second on): the CLI's assistant
deltas become agent_message_chunk updates, tool_use a tool_call,
tool_result its tool_call_update (completed or failed), result the
prompt's response (end_turn, or a JSON-RPC error for an error result or
a CLI that ended without one); session/cancel sends the CLI's process
group SIGTERM (gemini from npm runs behind a launcher that ignores a
signal to its pid alone) and the prompt ends with stopReason cancelled. When its stdin ends it stops
the CLI it runs and exits.

--bug NAME (comma-separated) plants one bug each, for a check to find:
  end-turn-after-cancel  answer end_turn to a cancelled prompt
  pending-tool           never send a tool call's final status
  empty-success          answer end_turn (no text) when the CLI failed
  leak-cli               on session/cancel answer cancelled at once and
                         leave the CLI running; exit at stdin's end
                         without stopping it
  decode-per-read        decode each read of the CLI's stdout by itself
                         (a character split across two reads is lost)
  no-response            never answer a prompt whose CLI ended without a
                         result
  double-response        answer every prompt twice
  bad-update             send tool calls without their toolCallId
"""
import json
import os
import signal
import subprocess
import sys
import threading
import uuid

BUGS = set()
if "--bug" in sys.argv:
    BUGS = set(sys.argv[sys.argv.index("--bug") + 1].split(","))

GEMINI = os.environ.get("GEMINI_EXECUTABLE", "gemini")
out_lock = threading.Lock()
sessions = {}


def send(msg):
    with out_lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def respond(rid, result):
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def fail(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def update(sid, u):
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": u}})


def cli_lines(stream):
    """The CLI's stdout lines, decoded as a whole (or, with the bug, by read)."""
    if "decode-per-read" not in BUGS:
        for raw in stream:
            yield raw.decode("utf-8", errors="replace")
        return
    fd = stream.fileno()
    pending = ""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        pending += chunk.decode("utf-8", errors="replace")
        *lines, pending = pending.split("\n")
        for line in lines:
            yield line
    if pending:
        yield pending


def run_prompt(rid, sid, text):
    s = sessions[sid]
    args = [GEMINI, "-p", text, "-o", "stream-json", "-y"]
    if s["resume"]:
        args += ["--resume", s["resume"]]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=sys.stderr,
                            start_new_session=True)
    with s["lock"]:
        s["proc"] = proc
        if s["cancelled"] and "leak-cli" not in BUGS:
            # Cancelled while the CLI was starting: the cancel found no
            # process to signal, so it is signalled now.
            signal_group(proc, signal.SIGTERM)
    result = None
    for line in cli_lines(proc.stdout):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        t = ev.get("type")
        if t == "init":
            s["resume"] = ev.get("session_id")
        elif t == "message" and ev.get("role") == "assistant":
            update(sid, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ev.get("content", "")}})
        elif t == "tool_use":
            call = {"sessionUpdate": "tool_call", "toolCallId": ev.get("tool_id"), "title": ev.get("tool_name"),
                    "kind": "other", "status": "in_progress", "rawInput": ev.get("parameters")}
            if "bad-update" in BUGS:
                del call["toolCallId"]
            update(sid, call)
        elif t == "tool_result" and "pending-tool" not in BUGS:
            status = "completed" if ev.get("status") == "success" else "failed"
            content = ev.get("output") or (ev.get("error") or {}).get("message") or ""
            update(sid, {"sessionUpdate": "tool_call_update", "toolCallId": ev.get("tool_id"), "status": status,
                         "content": [{"type": "content", "content": {"type": "text", "text": content}}]})
        elif t == "result":
            result = ev
    code = proc.wait()
    with s["lock"]:
        s["proc"], s["running"] = None, False
    if s["answered"]:
        return
    answers = 2 if "double-response" in BUGS else 1
    for _ in range(answers):
        if s["cancelled"]:
            respond(rid, {"stopReason": "end_turn" if "end-turn-after-cancel" in BUGS else "cancelled"})
        elif result and result.get("status") == "success":
            stats = result.get("stats") or {}
            inp, out = stats.get("input_tokens", 0), stats.get("output_tokens", 0)
            respond(rid, {"stopReason": "end_turn",
                          "usage": {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out}})
        elif result:
            if "empty-success" in BUGS:
                respond(rid, {"stopReason": "end_turn"})
            else:
                fail(rid, -32603, (result.get("error") or {}).get("message", "the CLI failed"))
        elif "no-response" in BUGS:
            return
        elif "empty-success" in BUGS:
            respond(rid, {"stopReason": "end_turn"})
        else:
            fail(rid, -32603, "gemini exited %d without a result" % code)


def stop(proc):
    if proc is None or proc.poll() is not None:
        return
    signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        signal_group(proc, signal.SIGKILL)
        proc.wait()


def signal_group(proc, sig):
    """Signal the CLI's whole process group: its launcher and the CLI."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def main():
    threads = []
    for raw in sys.stdin:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        params = msg.get("params") or {}
        if method is None:
            continue  # a response: this agent asks nothing
        if method == "initialize":
            respond(rid, {"protocolVersion": 1, "agentCapabilities": {"loadSession": False}, "authMethods": [],
                          "agentInfo": {"name": "gemini-acp-agent", "version": "1.0.0"}})
        elif method == "session/new":
            sid = str(uuid.uuid4())
            sessions[sid] = {"resume": None, "proc": None, "cancelled": False, "answered": False, "prompt_id": None,
                             "running": False, "lock": threading.Lock()}
            respond(rid, {"sessionId": sid})
        elif method == "session/prompt":
            sid = params.get("sessionId")
            if sid not in sessions:
                fail(rid, -32602, "Session not found: %s" % sid)
                continue
            s = sessions[sid]
            s["cancelled"], s["answered"], s["prompt_id"], s["running"] = False, False, rid, True
            text = "".join(b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text")
            th = threading.Thread(target=run_prompt, args=(rid, sid, text))
            th.start()
            threads.append(th)
        elif method == "session/cancel":
            s = sessions.get(params.get("sessionId"))
            # A prompt is running from its request to its answer, its CLI
            # started or not: a cancel that came before run_prompt had
            # started the CLI was once dropped, and the CLI ran its turn to
            # end_turn (a loaded runner, the fuzzer's stall fault).
            if s and s["running"]:
                with s["lock"]:
                    s["cancelled"] = True
                    if "leak-cli" in BUGS:
                        if s["proc"] is not None:
                            s["answered"] = True
                            respond(s["prompt_id"], {"stopReason": "cancelled"})
                    elif s["proc"] is not None:
                        signal_group(s["proc"], signal.SIGTERM)
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found: %s" % method}})
    # stdin ended: the editor is gone.
    if "leak-cli" in BUGS:
        os._exit(0)
    for s in sessions.values():
        stop(s["proc"])
    for th in threads:
        th.join(10)


if __name__ == "__main__":
    main()
