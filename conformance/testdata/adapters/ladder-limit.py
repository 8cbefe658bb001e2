#!/usr/bin/env python3
"""ladder-limit.py: a CORRECT test adapter with a line limit (profile native,
agent codex, supports interrupt). See README.md in this directory.

It hands on the events of `codex exec --json` as they come (re-serialised
with json.dumps), but reads stdout with a limit of 1 MiB (1,048,576 bytes)
per line, as the Python Claude Agent SDK does with max_buffer_size (default
1 MiB: "JSON message exceeded maximum buffer size"). A line longer than
that is not read: the adapter stops the CLI (SIGTERM, a wait of up to 2 s,
then SIGKILL), reports turn_end ok:false with the error

    CLI output line exceeded the 1048576-byte limit (line of N bytes or more)

(N is how much of the line it read before giving up) and goes on: the
session ends normally with its end record after close. A limit is allowed
(protocols.md §1.6, §2.5): what is not allowed is losing the line silently,
and this adapter says what it lost and why, naming the size.

Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
turn, end last, exit 0 after close. Stdin of the CLI is closed. A `send`
resumes the thread in a new process (codex exec ... resume ID PROMPT).
Interrupt: SIGINT, SIGTERM 2 s later, SIGKILL 2 s after that; the turn is
reported when the CLI has exited. `close` during a turn stops it the same
way.
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

NAME = "ladder-limit"
LIMIT = 1048576  # bytes per line, without its newline
EVENTS = queue.Queue()  # ("cmd", dict) | ("done", Turn) | ("signal", Turn, sig)
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
        self.terminal, self.failed, self.interrupted, self.overflow = False, "", "", 0
        self.timers = []
        threading.Thread(target=self.pump, daemon=True).start()

    def pump(self):
        out = self.proc.stdout
        while True:
            raw = out.readline(LIMIT + 1)  # at most the limit and a newline
            if not raw:
                break
            if raw.endswith(b"\n"):
                raw = raw[:-1]
            elif len(raw) > LIMIT:
                # The limit: the line goes on past LIMIT bytes. Stop reading
                # and stop the CLI.
                self.overflow = len(raw)
                log("a stdout line exceeded %d bytes; stopping codex" % LIMIT)
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                break
            line = raw.rstrip(b"\r")
            if not line.strip():
                continue
            try:
                obj = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                log("skipping a line that is not JSON: %r" % line[:120])
                continue
            if not isinstance(obj, dict):
                continue
            typ = obj.get("type")
            if typ == "thread.started" and isinstance(obj.get("thread_id"), str):
                self.session["id"] = obj["thread_id"]
            elif typ == "turn.completed":
                self.terminal = True
            elif typ == "turn.failed":
                self.terminal = True
                err = obj.get("error")
                self.failed = (err.get("message") if isinstance(err, dict) else "") or "turn failed"
            write(obj)
        self.proc.wait()
        out.close()
        EVENTS.put(("done", self))

    def interrupt(self, why):
        if self.interrupted or self.proc.poll() is not None:
            return
        self.interrupted = why
        self.proc.send_signal(signal.SIGINT)
        for delay, sig in ((2, signal.SIGTERM), (4, signal.SIGKILL)):
            t = threading.Timer(delay, EVENTS.put, args=(("signal", self, sig),))
            t.daemon = True
            t.start()
            self.timers.append(t)

    def outcome(self):
        code = self.proc.returncode
        if self.overflow:
            return False, "CLI output line exceeded the %d-byte limit (line of %d bytes or more)" % (LIMIT, self.overflow)
        if self.interrupted:
            return False, self.interrupted
        if self.failed:
            return False, self.failed
        if code is not None and code < 0:
            return False, "codex was killed by signal %d" % -code
        if code != 0:
            return False, "codex exited with code %s" % code
        if not self.terminal:
            return False, "codex exited without turn.completed"
        return True, ""


def main():
    record("hello", profile="native", agents=["codex"], supports=["interrupt"], name=NAME, version="1")
    threading.Thread(target=read_commands, daemon=True).start()
    signal.signal(signal.SIGINT, lambda *_: EVENTS.put(("cmd", {"op": "interrupt"})))  # signal mode
    session, turn, pending, closing = None, None, [], False
    while True:
        msg = EVENTS.get()
        if msg[0] == "signal":
            t, sig = msg[1], msg[2]
            if t.proc.poll() is None:
                t.proc.send_signal(sig)
            continue
        if msg[0] == "done":
            t = msg[1]
            for timer in t.timers:
                timer.cancel()
            ok, error = t.outcome()
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
