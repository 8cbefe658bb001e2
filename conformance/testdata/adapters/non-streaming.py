#!/usr/bin/env python3
"""non-streaming.py: a CORRECT but unusual test adapter (profile native,
agent codex, supports interrupt). See README.md in this directory.

It runs `codex exec --json` but writes nothing while the CLI runs: it keeps
every event and hands them all on (re-serialised with json.dumps, in order)
once the process has exited, followed by the turn_end. Nothing is lost; the
caller just sees the turn all at once.

How real adapters look: batch wrappers built on subprocess.run(...,
capture_output=True) or Popen.communicate(), which parse stdout only when
the process is done (a CI step, an evaluation harness, a Go helper calling
cmd.Output()).

Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
turn, end last, exit 0 after close. Stdin of the CLI is closed. A `send`
resumes the thread in a new process (codex exec ... resume ID PROMPT).
Interrupt: SIGINT, then a wait of up to 3 s, then SIGKILL; once the process
has exited it writes the events it has and turn_end ok:false error
"interrupted". `close` during a turn stops it the same way.
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

NAME = "non-streaming"
EVENTS = queue.Queue()  # ("cmd", dict) | ("done", Turn) | ("kill", Turn)
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


class Turn:
    def __init__(self, s, prompt):
        args = ["exec", "--json", "--skip-git-repo-check", "-s", "read-only" if s["permission"] == "deny" else "workspace-write"]
        if s["id"]:
            args += ["resume", s["id"]]
        args.append(prompt)
        exe = os.environ.get("CODEX_EXECUTABLE") or shutil.which("codex") or "codex"
        self.session = s
        self.proc = subprocess.Popen([exe] + args, cwd=s["cwd"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        self.events = []
        self.interrupted = ""
        self.killer = None
        threading.Thread(target=self.collect, daemon=True).start()

    def collect(self):
        for raw in self.proc.stdout:
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                obj = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                log("skipping a line that is not JSON: %r" % line[:120])
                continue
            if isinstance(obj, dict):
                self.events.append(obj)
        self.proc.wait()
        EVENTS.put(("done", self))

    def interrupt(self, why):
        if self.interrupted or self.proc.poll() is not None:
            return
        self.interrupted = why
        self.proc.send_signal(signal.SIGINT)
        self.killer = threading.Timer(3, EVENTS.put, args=(("kill", self),))
        self.killer.daemon = True
        self.killer.start()

    def finish(self):
        """Writes the turn's events; returns (ok, error)."""
        s = self.session
        terminal, failed = False, ""
        for obj in self.events:
            typ = obj.get("type")
            if typ == "thread.started" and isinstance(obj.get("thread_id"), str):
                s["id"] = obj["thread_id"]
            elif typ == "turn.completed":
                terminal = True
            elif typ == "turn.failed":
                terminal = True
                err = obj.get("error")
                failed = (err.get("message") if isinstance(err, dict) else "") or "turn failed"
            write(obj)
        code = self.proc.returncode
        if self.interrupted:
            return False, self.interrupted
        if failed:
            return False, failed
        if code is not None and code < 0:
            return False, "codex was killed by signal %d" % -code
        if code != 0:
            return False, "codex exited with code %s" % code
        if not terminal:
            return False, "codex exited without turn.completed"
        return True, ""


def main():
    record("hello", profile="native", agents=["codex"], supports=["interrupt"], name=NAME, version="1")
    threading.Thread(target=read_commands, daemon=True).start()
    signal.signal(signal.SIGINT, lambda *_: EVENTS.put(("cmd", {"op": "interrupt"})))  # signal mode
    session, turn, pending, closing = None, None, [], False
    while True:
        msg = EVENTS.get()
        if msg[0] == "kill":
            if msg[1].proc.poll() is None:
                msg[1].proc.kill()
            continue
        if msg[0] == "done":
            t = msg[1]
            if t.killer:
                t.killer.cancel()
            ok, error = t.finish()
            fields = {"ok": ok, "session_id": session["id"]}
            if not ok:
                fields["error"] = error
            record("turn_end", **fields)
            turn = None
            if closing:
                break
            if pending:
                turn = Turn(session, pending.pop(0))
            continue
        cmd = msg[1]
        op = cmd["op"]
        if op == "start":
            if session is not None:
                log("start: a session is already running; ignored")
            elif cmd.get("agent") != "codex":
                record("turn_end", ok=False, error="%s drives codex only, not %r" % (NAME, cmd.get("agent")), session_id="")
            else:
                session = {"cwd": cmd.get("cwd") or os.getcwd(), "permission": cmd.get("permission"), "id": cmd.get("resume") or ""}
                turn = Turn(session, cmd.get("prompt") or "")
        elif op == "send":
            if session is None:
                record("turn_end", ok=False, error="send before start", session_id="")
            elif turn is not None:
                pending.append(cmd.get("prompt") or "")
            else:
                turn = Turn(session, cmd.get("prompt") or "")
        elif op == "interrupt":
            if turn is not None:
                turn.interrupt("interrupted")
            else:
                log("interrupt: no running turn; ignored")
        elif op == "close":
            if closing:
                continue
            closing, pending = True, []
            if turn is None:
                break
            turn.interrupt("closed during the turn")  # the caller is gone; "done" reports the turn
    record("end", ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
