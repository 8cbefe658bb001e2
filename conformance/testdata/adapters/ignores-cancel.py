#!/usr/bin/env python3
"""ignores-cancel.py: a BUGGY test adapter (profile native, agents codex,
gemini and claude, supports interrupt). See README.md in this directory.

Planted bug: cancellation is acknowledged and ignored. On `interrupt` the
adapter does not touch the CLI at all: it writes turn_end ok:false error
"cancelled" at once, as if it had cancelled the turn, while the CLI goes on
working (its further output is still handed on, and a next `send` starts a
new process beside it). Only `close` stops the CLI: SIGKILL (Popen.kill()),
a wait for it, then the end record.

How the real thing looks: an MCP server (or JSON-RPC tool host) that answers
notifications/cancelled by marking the request done and replying, without
cancelling the task that does the work; the Python SDK's
cancel scope is never entered, so the subprocess runs on until the session
is torn down and the process is killed.

Everything else follows conformance/HARNESS.md: hello first, the CLI's JSON
lines handed on re-serialised (json.dumps), one turn_end per turn, end last,
exit 0 after close. Claude runs in print mode, `claude -p --output-format
stream-json --verbose PROMPT` with stdin closed; a `send` resumes the session
in a new process (codex exec resume ID, gemini --resume ID, claude
--resume=ID).
"""

import json
import os
import queue
import shutil
import subprocess
import sys
import threading

NAME = "ignores-cancel"
EVENTS = queue.Queue()  # ("cmd", dict) | ("done", Turn)
OUT_LOCK = threading.Lock()


def write(obj):
    data = (json.dumps(obj) + "\n").encode("utf-8")
    with OUT_LOCK:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def record(kind, **fields):
    write(dict(agentconform=kind, **fields))


def log(msg):
    sys.stderr.write("[%s] %s\n" % (NAME, msg))
    sys.stderr.flush()


def read_commands():
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        try:
            cmd = json.loads(raw)
        except ValueError:
            log("ignoring a command that is not JSON")
            continue
        if isinstance(cmd, dict) and isinstance(cmd.get("op"), str):
            EVENTS.put(("cmd", cmd))
            if cmd["op"] == "close":
                return
    EVENTS.put(("cmd", {"op": "close", "eof": True}))


ENV_NAMES = {"codex": "CODEX_EXECUTABLE", "gemini": "GEMINI_EXECUTABLE", "claude": "CLAUDE_CODE_EXECUTABLE"}


def executable(agent):
    return os.environ.get(ENV_NAMES[agent]) or shutil.which(agent) or agent


def cli_args(agent, prompt, permission, resume):
    if agent == "codex":
        args = ["exec", "--json", "--skip-git-repo-check", "-s", "read-only" if permission == "deny" else "workspace-write"]
        if resume:
            args += ["resume", resume]
        return args + [prompt]
    if agent == "gemini":
        args = ["-p", prompt, "-o", "stream-json"]
        if permission == "allow":
            args.append("-y")
        elif permission == "deny":
            args += ["--approval-mode", "default"]
        if resume:
            args += ["--resume", resume]
        return args
    args = ["-p", "--output-format", "stream-json", "--verbose"]
    if resume:
        args.append("--resume=" + resume)
    return args + [prompt]


def parse(raw):
    line = raw.rstrip(b"\r\n")
    if not line.strip():
        return None
    try:
        obj = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        log("skipping a line that is not JSON: %r" % line[:120])
        return None
    return obj if isinstance(obj, dict) else None


class Session:
    def __init__(self, cmd):
        self.agent = cmd.get("agent")
        self.cwd = cmd.get("cwd") or os.getcwd()
        self.permission = cmd.get("permission")
        self.id = cmd.get("resume") or ""


class Turn:
    def __init__(self, session, prompt):
        self.session = session
        self.terminal = False
        self.error = ""
        self.proc = subprocess.Popen(
            [executable(session.agent)] + cli_args(session.agent, prompt, session.permission, session.id),
            cwd=session.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        threading.Thread(target=self.pump, daemon=True).start()

    def pump(self):
        for raw in self.proc.stdout:
            obj = parse(raw)
            if obj is None:
                continue
            self.observe(obj)
            write(obj)
        self.proc.wait()
        EVENTS.put(("done", self))

    def observe(self, obj):
        s, t = self.session, obj.get("type")
        if s.agent == "codex":
            if t == "thread.started" and isinstance(obj.get("thread_id"), str):
                s.id = obj["thread_id"]
            elif t == "turn.completed":
                self.terminal = True
            elif t == "turn.failed":
                self.terminal = True
                err = obj.get("error")
                self.error = (err.get("message") if isinstance(err, dict) else "") or "turn failed"
        elif s.agent == "gemini":
            if t == "init" and isinstance(obj.get("session_id"), str):
                s.id = obj["session_id"]
            elif t == "result":
                self.terminal = True
                if obj.get("status") != "success":
                    err = obj.get("error")
                    self.error = (err.get("message") if isinstance(err, dict) else "") or "result status %s" % obj.get("status")
        else:
            if t == "system" and obj.get("subtype") == "init" and isinstance(obj.get("session_id"), str):
                s.id = obj["session_id"]
            elif t == "result":
                self.terminal = True
                if obj.get("is_error"):
                    errs = obj.get("errors")
                    self.error = "; ".join(str(e) for e in errs) if isinstance(errs, list) and errs else str(obj.get("result") or obj.get("subtype") or "error result")

    def outcome(self):
        code, agent = self.proc.returncode, self.session.agent
        if self.error:
            return False, self.error
        if code is not None and code < 0:
            return False, "%s was killed by signal %d" % (agent, -code)
        if code != 0:
            return False, "%s exited with code %s" % (agent, code)
        if not self.terminal:
            return False, "%s exited without its terminal event" % agent
        return True, ""


def main():
    record("hello", profile="native", agents=["codex", "gemini", "claude"], supports=["interrupt"], name=NAME, version="1")
    threading.Thread(target=read_commands, daemon=True).start()
    session, turn, pending, closing = None, None, [], False
    abandoned = []  # turns reported "cancelled" whose CLI still runs
    while True:
        kind, item = EVENTS.get()
        if kind == "done":
            if item in abandoned:
                abandoned.remove(item)  # its turn_end was written long ago
                continue
            ok, error = item.outcome()
            fields = {"ok": ok, "session_id": item.session.id}
            if not ok:
                fields["error"] = error if not closing else "closed during the turn: " + error
            record("turn_end", **fields)
            turn = None
            if closing:
                break
            if pending:
                turn = Turn(session, pending.pop(0))
            continue
        op = item["op"]
        if op == "start":
            if session is not None:
                log("start: a session is already running; ignored")
            elif item.get("agent") not in ENV_NAMES:
                record("turn_end", ok=False, error="unknown agent %r" % item.get("agent"), session_id="")
            else:
                session = Session(item)
                turn = Turn(session, item.get("prompt") or "")
        elif op == "send":
            if session is None:
                record("turn_end", ok=False, error="send before start", session_id="")
            elif turn is not None:
                pending.append(item.get("prompt") or "")
            else:
                turn = Turn(session, item.get("prompt") or "")
        elif op == "interrupt":
            # The bug: claim the cancellation and leave the CLI alone. The
            # turn counts as over (a next send starts a new process at
            # once); the abandoned CLI works on, its output still handed on.
            if turn is not None:
                record("turn_end", ok=False, error="cancelled", session_id=session.id)
                abandoned.append(turn)
                turn = None
                if pending:
                    turn = Turn(session, pending.pop(0))
        elif op == "close":
            closing, pending = True, []
            # Only now is any CLI stopped: SIGKILL, and a wait for it.
            for t in abandoned + ([turn] if turn else []):
                t.proc.kill()
                t.proc.wait()
            if turn is None:
                break
            # the running turn's "done" (after its stdout ends) reports it
    record("end", ok=True)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
