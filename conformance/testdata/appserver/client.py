"""client.py: a small client of `codex app-server` (JSON-RPC over stdio)
that speaks the harness protocol (conformance/HARNESS.md) as agent
"codex-app-server", profile unified, for testing the app-server checks.

    python3 client.py [MODE]

MODE "correct" (the default) does what an editor must: one app-server
process per session; initialize, initialized, thread/start (thread/resume
of the thread a start asks to resume), then one turn/start per prompt, each turn over at its turn/completed; answers paired
with requests by id; approvals answered once with the policy's decision;
interrupts sent as turn/interrupt; text decoded from whole lines; on close,
stdin closed and the server waited for (then terminated); a turn asked
for after the server died runs in a new app-server that resumes the
thread (thread/resume). Each other MODE
plants one bug that real clients have:

    no-initialize       sends thread/start without initialize first
    status-ignored      reports every turn/completed as a success, even
                        interrupted
    kill-to-interrupt   interrupts by terminating the server (SIGTERM)
    approve-always      answers every approval accept, whatever the policy
    approve-twice       answers every approval twice
    decode-per-read     decodes each read of stdout by itself, so a
                        character split across reads becomes U+FFFD
    strict-ids          raises on an answer to no pending request (dies)
    strict-methods      raises on a notification it does not know (dies)
    leak                leaves the server running: a helper it starts
                        inherits the server's stdin, and close does not
                        stop the server
    end-on-response     takes the answer to turn/start (status inProgress)
                        for the end of the turn
    resume-new-thread   starts a new thread where the caller asked to
                        resume one (thread/start, never thread/resume)
    resume-fallback     resumes the thread asked for, and when the server
                        does not have it starts a new thread in its place
                        and runs the turn there, as if resumed
    resume-silent       reports a thread the server does not have as a
                        failed turn without saying why ("resume failed")
    no-restart          after the server died, fails every later turn
                        instead of starting a new one
    restart-new-thread  after the server died, starts a new one and a
                        new thread there (thread/start) for the next turn

Standard library only (Python 3.9+).
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid

MODE = sys.argv[1] if len(sys.argv) > 1 else "correct"
OUT = threading.Lock()
EVENTS = queue.Queue()  # ("cmd", obj) | ("msg", obj) | ("eof", None)


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
        self.thread = ""
        self.turn = ""
        self.policy = "allow"
        self.in_turn = False
        self.interrupted = False
        self.ended = False
        self.started = False
        self.resume = ""
        self.dead = False

    def event(self, typ, **fields):
        write(dict(id=str(uuid.uuid4()), sessionId=self.thread or "pending", timestamp=now(), type=typ, **fields))

    def send(self, obj):
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write((json.dumps(obj) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def request(self, method, params):
        self.next_id += 1
        self.pending[self.next_id] = method
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def spawn(self):
        self.dead = False
        self.pending = {}
        exe = os.environ.get("CODEX_EXECUTABLE") or "codex"
        self.proc = subprocess.Popen([exe, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if MODE == "leak":
            # A helper started without closing the server's pipes keeps
            # its stdin open after this client is gone.
            subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             pass_fds=(self.proc.stdin.fileno(),), start_new_session=True)
        threading.Thread(target=self.read, args=(self.proc,), daemon=True).start()

    def read(self, proc):
        out = proc.stdout
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
        EVENTS.put(("eof", proc))

    def line(self, line):
        line = line.strip()
        if not line:
            return
        try:
            EVENTS.put(("msg", json.loads(line)))
        except ValueError:
            pass

    # --- the server's messages, on the main thread ---

    def message(self, msg):
        method = msg.get("method")
        if method is not None and "id" in msg:
            self.server_request(msg)
        elif method is not None:
            self.notification(method, msg.get("params") or {})
        elif "id" in msg:
            self.response(msg)

    def server_request(self, msg):
        method = msg["method"]
        if method.endswith("/requestApproval"):
            decision = "accept" if self.policy == "allow" or MODE == "approve-always" else "decline"
            self.send({"id": msg["id"], "result": {"decision": decision}})
            if MODE == "approve-twice":
                self.send({"id": msg["id"], "result": {"decision": decision}})
        else:
            self.send({"id": msg["id"], "error": {"code": -32601, "message": "not supported: " + method}})

    KNOWN = {"turn/started", "turn/completed", "item/started", "item/completed", "item/agentMessage/delta",
             "thread/started", "thread/status/changed", "thread/tokenUsage/updated", "account/rateLimits/updated",
             "configWarning", "remoteControl/status/changed", "serverRequest/resolved", "turn/diff/updated",
             "item/commandExecution/outputDelta", "item/reasoning/summaryPartAdded", "item/reasoning/summaryTextDelta",
             "deprecationNotice", "thread/goal/cleared"}

    def notification(self, method, params):
        if MODE == "strict-methods" and method not in self.KNOWN:
            raise RuntimeError("unknown notification " + method)
        if method == "turn/started":
            self.turn = (params.get("turn") or {}).get("id", "")
        elif method == "item/agentMessage/delta" and self.in_turn:
            self.event("textChunk", content=params.get("delta", ""), role="assistant")
        elif method == "turn/completed" and self.in_turn:
            status = (params.get("turn") or {}).get("status")
            self.finish_turn(status)

    def finish_turn(self, status):
        self.in_turn = False
        if MODE == "status-ignored":
            status = "completed"
        if status == "completed":
            self.event("turnCompleted")
            write({"agentconform": "turn_end", "ok": True, "session_id": self.thread, "reason": "completed"})
        elif status == "interrupted":
            write({"agentconform": "turn_end", "ok": False, "error": "interrupted", "session_id": self.thread, "reason": "cancelled"})
        else:
            write({"agentconform": "turn_end", "ok": False, "error": "turn " + str(status), "session_id": self.thread, "reason": "failed"})

    def response(self, msg):
        rid = msg.get("id")
        method = self.pending.pop(rid, None)
        if method is None:
            if MODE == "strict-ids":
                raise RuntimeError("an answer to no pending request: %r" % (rid,))
            return
        if "error" in msg:
            if method == "thread/resume" and MODE == "resume-fallback":
                self.request("thread/start", {"cwd": os.getcwd()})
                return
            if method == "thread/resume" and MODE == "resume-silent" and self.in_turn:
                self.in_turn = False
                write({"agentconform": "turn_end", "ok": False, "error": "resume failed", "session_id": self.thread, "reason": "failed"})
                return
            if self.in_turn and method in ("thread/start", "thread/resume", "turn/start", "initialize"):
                self.in_turn = False
                write({"agentconform": "turn_end", "ok": False, "error": json.dumps(msg["error"]), "session_id": self.thread, "reason": "failed"})
            return
        result = msg.get("result") or {}
        if method == "initialize":
            self.send({"method": "initialized"})
            if self.thread and MODE != "restart-new-thread":
                self.request("thread/resume", {"threadId": self.thread})
            elif self.resume and MODE != "resume-new-thread":
                self.request("thread/resume", {"threadId": self.resume})
            else:
                self.request("thread/start", {"cwd": os.getcwd()})
        elif method in ("thread/start", "thread/resume"):
            self.thread = (result.get("thread") or {}).get("id", "")
            if not self.started:
                self.event("sessionStarted", agentType="codex")
            self.started = True
            self.start_turn(self.prompt)
        elif method == "turn/start" and MODE == "end-on-response" and self.in_turn:
            self.finish_turn("completed")

    def start_turn(self, prompt):
        self.in_turn = True
        self.interrupted = False
        params = {"threadId": self.thread, "input": [{"type": "text", "text": prompt, "text_elements": []}]}
        if MODE != "default-policy":
            params["approvalPolicy"] = "untrusted"
        self.request("turn/start", params)

    # --- the runner's commands ---

    def command(self, cmd):
        op = cmd.get("op")
        if op == "start":
            self.policy = cmd.get("permission") or "allow"
            self.prompt = cmd.get("prompt", "")
            self.resume = cmd.get("resume") or ""
            self.in_turn = True
            self.spawn()
            if MODE == "no-initialize":
                self.request("thread/start", {"cwd": os.getcwd()})
            else:
                self.request("initialize", {"clientInfo": {"name": "agentconform_test_client", "version": "1.0.0"}})
        elif op == "send":
            if self.dead and MODE != "no-restart":
                # The server died: a new one, which resumes the thread
                # (initialize, then thread/resume, then the turn).
                self.prompt = cmd.get("prompt", "")
                self.in_turn = True
                self.spawn()
                self.request("initialize", {"clientInfo": {"name": "agentconform_test_client", "version": "1.0.0"}})
            elif self.dead:
                write({"agentconform": "turn_end", "ok": False, "error": "the app-server is gone", "session_id": self.thread, "reason": "failed"})
            else:
                self.start_turn(cmd.get("prompt", ""))
        elif op == "interrupt":
            if MODE == "kill-to-interrupt":
                self.proc.terminate()
            elif self.turn:
                self.request("turn/interrupt", {"threadId": self.thread, "turnId": self.turn})
        elif op == "close":
            self.close()
            return False
        return True

    def close(self):
        if self.in_turn:
            self.in_turn = False
            write({"agentconform": "turn_end", "ok": False, "error": "closed while the turn ran", "session_id": self.thread, "reason": "failed"})
        if self.proc is not None and MODE != "leak":
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
        if self.proc is not None:
            if not self.started:
                self.event("sessionStarted", agentType="codex")
            self.event("sessionEnded", reason="completed")
        write({"agentconform": "end", "ok": True})


def commands():
    for line in sys.stdin.buffer:
        line = line.strip()
        if line:
            EVENTS.put(("cmd", json.loads(line)))
    EVENTS.put(("cmd", {"op": "close"}))


def main():
    write({"agentconform": "hello", "profile": "unified", "agents": ["codex-app-server"],
           "supports": ["multi_turn", "interrupt", "permission", "resume"], "name": "appserver-client-" + MODE, "version": "1.0.0"})
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
            if obj is not s.proc:
                continue  # a server this client already replaced
            s.dead = True
            if s.in_turn:
                s.in_turn = False
                write({"agentconform": "turn_end", "ok": False, "error": "the app-server exited", "session_id": s.thread, "reason": "failed"})
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
