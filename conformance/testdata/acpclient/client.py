"""client.py: a small Agent Client Protocol client of `gemini --acp`
(JSON-RPC 2.0 over stdio, one message per line) that speaks the harness
protocol (conformance/HARNESS.md) as agent "gemini-acp", profile unified,
for testing the checks of ACP clients.

    python3 client.py [MODE]

MODE "correct" (the default) does what an editor must: one agent process
per session; initialize (with the fs capability), session/new (or
session/load for a start that resumes), then one session/prompt per turn,
each turn over at the prompt's answer; answers paired with requests by id;
permission requests answered once with the policy's option, or with the
cancelled outcome once the turn was cancelled; fs requests served from
disk (a missing file is -32002 Resource not found), any other request
-32601; interrupts sent as session/cancel; text decoded from whole lines;
on close, a running turn cancelled, stdin closed and the agent waited for
(then terminated). Each other MODE plants one bug that real clients have:

    cancel-ok           reports a turn the agent answered cancelled as a
                        success
    end-twice           ends a turn at every answer to a session/prompt,
                        even one it already had
    eof-ok              reports a turn whose agent died or went quiet as
                        a success (no answer is taken for the end)
    kill-to-interrupt   interrupts by terminating the agent (SIGTERM)
    approve-always      answers every permission request with the allow
                        option, whatever the policy and after a cancel too
    ok-to-everything    declares no capabilities, yet answers every other
                        request of the agent with an empty result (an fs
                        read with empty content)
    mcp-habit           sends notifications/initialized after initialize,
                        as an MCP client does
    decode-per-read     decodes each read of stdout by itself, so a
                        character split across reads becomes U+FFFD
    strict-ids          raises on an answer to no pending request (dies)
    strict-updates      raises on a session/update kind it does not know
                        (dies)
    leak                leaves the agent running: a helper it starts
                        inherits the agent's stdin, and close does not
                        stop the agent

Standard library only (Python 3.9+).
"""

import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid

MODE = sys.argv[1] if len(sys.argv) > 1 else "correct"
OUT = threading.Lock()
EVENTS = queue.Queue()  # ("cmd", obj) | ("msg", obj) | ("eof", None)
KNOWN_UPDATES = {"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update",
                 "plan", "available_commands_update", "current_mode_update", "config_option_update", "session_info_update",
                 "usage_update"}


def write(obj):
    data = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
    with OUT:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"


class Session:
    def __init__(self):
        self.proc = None
        self.next_id = 0
        self.pending = {}  # id -> method
        self.session = ""
        self.policy = "allow"
        self.prompt_text = ""
        self.resume = ""
        self.cwd = os.getcwd()
        self.in_turn = False  # a harness turn runs (its turn_end not written)
        self.prompt_id = None  # the running session/prompt's id
        self.cancelled = False  # session/cancel sent for the running prompt
        self.cancel_pending = False  # an interrupt came before the prompt went out
        self.answered = set()  # prompt ids answered (end-twice ends again)
        self.started = False
        self.dead = False

    def event(self, typ, **fields):
        write(dict(id=str(uuid.uuid4()), sessionId=self.session or "pending", timestamp=now(), type=typ, **fields))

    def turn_end(self, ok, reason, error=""):
        self.in_turn = False
        rec = {"agentconform": "turn_end", "ok": ok, "session_id": self.session, "reason": reason}
        if not ok:
            rec["error"] = error or reason
        else:
            if not self.started:
                self.started = True
                self.event("sessionStarted", agentType="gemini")
            self.event("turnCompleted")
        write(rec)

    def send(self, obj):
        if self.proc is None or self.proc.stdin is None:
            return
        obj = dict(jsonrpc="2.0", **obj)
        try:
            self.proc.stdin.write((json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.pending[rid] = method
        self.send({"id": rid, "method": method, "params": params})
        return rid

    def spawn(self):
        exe = os.environ.get("GEMINI_EXECUTABLE") or "gemini"
        self.proc = subprocess.Popen([exe, "--acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=self.cwd)
        if MODE == "leak":
            # A helper started without closing the agent's pipes keeps its
            # stdin open after this client is gone.
            subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             pass_fds=(self.proc.stdin.fileno(),), start_new_session=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        out = self.proc.stdout
        buf = b""
        text = ""
        while True:
            chunk = os.read(out.fileno(), 4096)
            if not chunk:
                break
            if MODE == "decode-per-read":
                text += chunk.decode("utf-8", errors="replace")
                while "\n" in text:
                    line, text = text.split("\n", 1)
                    self.line(line)
                continue
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self.line(line.decode("utf-8", errors="replace"))
        EVENTS.put(("eof", None))

    def line(self, line):
        line = line.strip()
        if not line:
            return
        try:
            EVENTS.put(("msg", json.loads(line)))
        except ValueError:
            pass

    # --- the agent's messages, on the main thread ---

    def message(self, msg):
        method = msg.get("method")
        if method is not None and "id" in msg:
            self.agent_request(msg)
        elif method is not None:
            self.notification(method, msg.get("params") or {})
        elif "id" in msg:
            self.response(msg)

    def agent_request(self, msg):
        method, params = msg["method"], msg.get("params") or {}
        if method == "session/request_permission":
            self.send({"id": msg["id"], "result": {"outcome": self.permission(params.get("options") or [])}})
        elif MODE == "ok-to-everything":
            self.send({"id": msg["id"], "result": {"content": ""} if method == "fs/read_text_file" else {}})
        elif method == "fs/read_text_file":
            self.send(dict(id=msg["id"], **self.read_file(params.get("path", ""))))
        elif method == "fs/write_text_file":
            self.send(dict(id=msg["id"], **self.write_file(params.get("path", ""), params.get("content", ""))))
        else:
            self.send({"id": msg["id"], "error": {"code": -32601, "message": "Method not found: " + method}})

    def permission(self, options):
        if self.cancelled and MODE != "approve-always":
            return {"outcome": "cancelled"}
        kinds = ["allow_once", "allow_always"]
        if self.policy != "allow" and MODE != "approve-always":
            kinds = ["reject_once", "reject_always"]
        for kind in kinds:
            for o in options:
                if o.get("kind") == kind:
                    return {"outcome": "selected", "optionId": o.get("optionId")}
        return {"outcome": "cancelled"}

    def inside(self, path):
        real = os.path.realpath(path)
        return real == self.cwd or real.startswith(self.cwd + os.sep)

    def read_file(self, path):
        if not self.inside(path) or not os.path.isfile(path):
            return {"error": {"code": -32002, "message": "Resource not found: " + path, "data": {"uri": path}}}
        with open(path, encoding="utf-8", errors="replace") as f:
            return {"result": {"content": f.read()}}

    def write_file(self, path, content):
        if not self.inside(path):
            return {"error": {"code": -32002, "message": "Resource not found: " + path, "data": {"uri": path}}}
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        return {"result": {}}

    def notification(self, method, params):
        if method != "session/update":
            return
        update = params.get("update") or {}
        kind = update.get("sessionUpdate")
        if MODE == "strict-updates" and kind not in KNOWN_UPDATES:
            raise RuntimeError("unknown session/update " + str(kind))
        if kind == "agent_message_chunk" and self.prompt_id is not None:
            content = update.get("content") or {}
            if content.get("type") == "text":
                self.event("textChunk", content=content.get("text", ""), role="assistant")

    def response(self, msg):
        rid = msg.get("id")
        method = self.pending.pop(rid, None)
        if method is None:
            if MODE == "strict-ids":
                raise RuntimeError("an answer to no pending request: %r" % (rid,))
            if MODE == "end-twice" and rid in self.answered:
                self.turn_end(True, "completed")
            return
        err = msg.get("error")
        result = msg.get("result") or {}
        if method == "initialize":
            if err:
                self.turn_end(False, "failed", "initialize: " + json.dumps(err))
                return
            if MODE == "mcp-habit":
                self.send({"method": "notifications/initialized"})
            params = {"cwd": self.cwd, "mcpServers": []}
            if self.resume:
                self.request("session/load", dict(params, sessionId=self.resume))
            else:
                self.request("session/new", params)
        elif method in ("session/new", "session/load"):
            if err:
                self.turn_end(False, "failed", method + ": " + json.dumps(err))
                return
            self.session = result.get("sessionId") or self.resume
            self.started = True
            self.event("sessionStarted", agentType="gemini")
            self.start_prompt(self.prompt_text)
        elif method == "session/prompt":
            self.answered.add(rid)
            if rid != self.prompt_id:
                return
            self.prompt_id = None
            if err:
                self.turn_end(False, "failed", err.get("message", json.dumps(err)))
                return
            reason = result.get("stopReason")
            if reason == "end_turn" or (reason == "cancelled" and MODE == "cancel-ok"):
                self.turn_end(True, "completed")
            elif reason == "cancelled":
                self.turn_end(False, "cancelled", "cancelled")
            elif reason == "max_turn_requests":
                self.turn_end(False, "max_turns", "stopReason max_turn_requests")
            else:
                self.turn_end(False, "failed", "stopReason " + str(reason))

    def start_prompt(self, text):
        self.in_turn = True
        self.cancelled = False
        self.prompt_id = self.request("session/prompt", {"sessionId": self.session, "prompt": [{"type": "text", "text": text}]})
        if self.cancel_pending:
            self.cancel_pending = False
            self.cancel()

    def cancel(self):
        self.cancelled = True
        self.send({"method": "session/cancel", "params": {"sessionId": self.session}})

    # --- the runner's commands ---

    def command(self, cmd):
        op = cmd.get("op")
        if op == "start":
            self.policy = cmd.get("permission") or "allow"
            self.prompt_text = cmd.get("prompt", "")
            self.resume = cmd.get("resume") or ""
            self.cwd = os.path.realpath(cmd.get("cwd") or os.getcwd())
            self.in_turn = True
            self.spawn()
            fs = MODE != "ok-to-everything"
            self.request("initialize", {"protocolVersion": 1, "clientInfo": {"name": "agentconform-test-client", "version": "1.0.0"},
                                        "clientCapabilities": {"fs": {"readTextFile": fs, "writeTextFile": fs}, "terminal": False}})
        elif op == "send":
            if self.dead or not self.session:
                self.in_turn = True
                self.turn_end(False, "failed", "the agent is gone" if self.dead else "no session")
            else:
                self.start_prompt(cmd.get("prompt", ""))
        elif op == "interrupt":
            if MODE == "kill-to-interrupt":
                self.proc.terminate()
            elif self.prompt_id is not None:
                self.cancel()
            elif self.in_turn:
                # The session is still being made: cancel the prompt as
                # soon as it is out.
                self.cancel_pending = True
        elif op == "close":
            self.close()
            return False
        return True

    def drain(self, seconds):
        """Handles the agent's messages for a while (until the turn ends)."""
        deadline = time.time() + seconds
        while self.in_turn and time.time() < deadline:
            try:
                kind, obj = EVENTS.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if kind == "msg":
                self.message(obj)
            elif kind == "eof":
                self.agent_gone()

    def agent_gone(self):
        self.dead = True
        self.prompt_id = None
        if self.in_turn:
            if MODE == "eof-ok":
                self.turn_end(True, "completed")
            else:
                self.turn_end(False, "failed", "the agent exited before it answered")

    def close(self):
        if self.in_turn and self.prompt_id is not None and not self.dead and MODE != "eof-ok":
            self.cancel()
            self.drain(2)
        if self.in_turn:
            if MODE == "eof-ok":
                self.turn_end(True, "completed")
            else:
                self.turn_end(False, "cancelled", "closed while the turn ran")
        if self.proc is not None and MODE != "leak":
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
        if self.proc is not None:
            if not self.started:
                self.event("sessionStarted", agentType="gemini")
            self.event("sessionEnded", reason="completed")
        write({"agentconform": "end", "ok": True})


def commands():
    for line in sys.stdin.buffer:
        line = line.strip()
        if line:
            EVENTS.put(("cmd", json.loads(line)))
    EVENTS.put(("cmd", {"op": "close"}))


def main():
    write({"agentconform": "hello", "profile": "unified", "agents": ["gemini-acp"],
           "supports": ["multi_turn", "resume", "interrupt", "permission"], "name": "acp-client-" + MODE, "version": "1.0.0"})
    s = Session()
    threading.Thread(target=commands, daemon=True).start()
    while True:
        kind, obj = EVENTS.get()
        if kind == "cmd":
            if not s.command(obj):
                break
        elif kind == "msg":
            s.message(obj)
        elif kind == "eof":
            s.agent_gone()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
