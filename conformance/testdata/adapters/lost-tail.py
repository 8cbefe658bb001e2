#!/usr/bin/env python3
"""lost-tail.py: a BUGGY test adapter (profile native, agents codex, gemini and
claude, supports nothing). See README.md in this directory.

Planted bug: the tail of the CLI's output is lost and the turn still counts
as a success. It hands on every line the CLI wrote except the last one, and
for Codex it also drops the last `item.completed` agent_message when that is
one of the last two lines; the turn_end is ok:true whenever the CLI exits 0.
So the terminal event (Codex turn.completed with its usage, Claude and
Gemini result) never reaches the caller, nor, for Codex, the final answer.

How the real thing looks: a Go SDK that reads the CLI's stdout with a
bufio.Scanner in one goroutine while another calls cmd.Wait(), which closes
the stdout pipe as soon as the process exits; the scanner's last Read fails
with "file already closed", Scan returns false, Scanner.Err() is never
checked, and the turn is judged by the exit status alone. Which lines are
lost depends on the race; this adapter loses them deterministically (the
lines still buffered in the pipe when the process exited are the last ones).

Everything else follows conformance/HARNESS.md: hello first, the lines it
does hand on re-serialised (json.dumps), one turn_end per turn, end last,
exit 0 after close. It declares no interrupt: an `interrupt` is logged and
ignored; `close` during a turn stops the CLI (SIGTERM, SIGKILL 2 s later)
and reports the turn ok:false. Claude runs in print mode, `claude -p
--output-format stream-json --verbose PROMPT` with stdin closed; a `send`
resumes the session in a new process (codex exec resume ID, gemini --resume
ID, claude --resume=ID).
"""

import json
import os
import queue
import shutil
import subprocess
import sys
import threading

NAME = "lost-tail"
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
        self.finished_before_close = True
        self.proc = subprocess.Popen(
            [executable(session.agent)] + cli_args(session.agent, prompt, session.permission, session.id),
            cwd=session.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        threading.Thread(target=self.pump, daemon=True).start()

    def pump(self):
        held = []  # the last lines read, not handed on yet
        for raw in self.proc.stdout:
            obj = parse(raw)
            if obj is not None:
                self.observe(obj)
            held.append(obj)
            if len(held) > 2:
                self.hand_on(held.pop(0))
        self.proc.wait()
        # The bug: the last line is lost, and for Codex the final answer too
        # when it is among the last two lines.
        for obj in held[:-1]:
            if self.session.agent == "codex" and is_agent_message(obj):
                continue
            self.hand_on(obj)
        EVENTS.put(("done", self))

    def hand_on(self, obj):
        if obj is not None:
            write(obj)

    def observe(self, obj):
        # Only the session id matters: the outcome is the exit status.
        s, t = self.session, obj.get("type")
        if s.agent == "codex" and t == "thread.started" and isinstance(obj.get("thread_id"), str):
            s.id = obj["thread_id"]
        elif s.agent == "gemini" and t == "init" and isinstance(obj.get("session_id"), str):
            s.id = obj["session_id"]
        elif s.agent == "claude" and t == "system" and obj.get("subtype") == "init" and isinstance(obj.get("session_id"), str):
            s.id = obj["session_id"]

    def outcome(self):
        # The bug, again: the exit status alone decides.
        code, agent = self.proc.returncode, self.session.agent
        if code == 0:
            return True, ""
        if code is not None and code < 0:
            return False, "%s was killed by signal %d" % (agent, -code)
        return False, "%s exited with code %s" % (agent, code)


def is_agent_message(obj):
    item = obj.get("item") if obj else None
    return obj is not None and obj.get("type") == "item.completed" and isinstance(item, dict) and item.get("type") == "agent_message"


def stop(proc):
    """SIGTERM, then SIGKILL if the CLI has not exited 2 s later."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    record("hello", profile="native", agents=["codex", "gemini", "claude"], supports=[], name=NAME, version="1")
    threading.Thread(target=read_commands, daemon=True).start()
    session, turn, pending, closing = None, None, [], False
    while True:
        kind, item = EVENTS.get()
        if kind == "done":
            ok, error = item.outcome()
            fields = {"ok": ok, "session_id": item.session.id}
            if closing and not item.finished_before_close:
                ok, error = False, "closed during the turn" + (": " + error if error else "")
                fields["ok"] = False
            if not ok:
                fields["error"] = error
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
            log("interrupt: not supported (no \"interrupt\" in supports); ignored")
        elif op == "close":
            closing, pending = True, []
            if turn is None:
                break
            # The caller is gone while the turn runs: stop the CLI; the
            # turn's "done" reports it.
            turn.finished_before_close = turn.proc.poll() is not None
            stop(turn.proc)
    record("end", ok=True)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
