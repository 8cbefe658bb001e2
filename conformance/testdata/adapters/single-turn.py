#!/usr/bin/env python3
"""single-turn.py: a CORRECT but minimal test adapter (profile native, agent
codex, supports nothing: no multi_turn, no interrupt, no resume). See
README.md in this directory.

It runs one turn, `codex exec --json --skip-git-repo-check -s MODE PROMPT`
with stdin closed, hands on the CLI's events as they come (re-serialised
with json.dumps), reports the turn (ok iff codex exits 0 after
turn.completed) and, on `close`, writes end and exits 0. `close` while the
turn runs means the caller is gone: it stops the CLI (SIGINT, SIGTERM 2 s
later, SIGKILL 2 s after that), waits for it and reports the turn ok:false.

It declares "supports": [], so a runner must not send it `send` or
`interrupt` (HARNESS.md: checks of what it does not claim are SKIP). If it
gets one anyway it says "unexpected command" on stderr, kills the CLI if one
runs, and exits 3 without an end record: sending it was the runner's fault.

How real adapters look: the many one-shot wrappers (a GitHub Action step,
a Makefile target, a script around `codex exec --json`) that run one prompt
and have no notion of a conversation or of cancelling it.
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

NAME = "single-turn"
EVENTS = queue.Queue()  # ("cmd", dict) | ("done", None) | ("signal", sig)
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
    def __init__(self, cmd):
        args = ["exec", "--json", "--skip-git-repo-check", "-s", "read-only" if cmd.get("permission") == "deny" else "workspace-write",
                cmd.get("prompt") or ""]
        exe = os.environ.get("CODEX_EXECUTABLE") or shutil.which("codex") or "codex"
        self.proc = subprocess.Popen([exe] + args, cwd=cmd.get("cwd") or os.getcwd(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        self.sid, self.terminal, self.failed, self.stopped, self.reported = "", False, "", False, False
        self.timers = []
        threading.Thread(target=self.pump, daemon=True).start()

    def pump(self):
        for raw in self.proc.stdout:
            line = raw.rstrip(b"\r\n")
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
                self.sid = obj["thread_id"]
            elif typ == "turn.completed":
                self.terminal = True
            elif typ == "turn.failed":
                self.terminal = True
                err = obj.get("error")
                self.failed = (err.get("message") if isinstance(err, dict) else "") or "turn failed"
            write(obj)
        self.proc.wait()
        EVENTS.put(("done", None))

    def stop(self):
        """SIGINT, then SIGTERM and SIGKILL while the CLI lingers."""
        if self.stopped or self.proc.poll() is not None:
            return
        self.stopped = True
        self.proc.send_signal(signal.SIGINT)
        for delay, sig in ((2, signal.SIGTERM), (4, signal.SIGKILL)):
            t = threading.Timer(delay, EVENTS.put, args=(("signal", sig),))
            t.daemon = True
            t.start()
            self.timers.append(t)

    def outcome(self):
        code = self.proc.returncode
        if self.stopped:
            return False, "closed during the turn"
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
    record("hello", profile="native", agents=["codex"], supports=[], name=NAME, version="1")
    threading.Thread(target=read_commands, daemon=True).start()
    turn, closing = None, False
    while True:
        kind, item = EVENTS.get()
        if kind == "signal":
            if turn is not None and turn.proc.poll() is None:
                turn.proc.send_signal(item)
            continue
        if kind == "done":
            for t in turn.timers:
                t.cancel()
            ok, error = turn.outcome()
            fields = {"ok": ok, "session_id": turn.sid}
            if not ok:
                fields["error"] = error
            record("turn_end", **fields)
            turn.reported = True
            if closing:
                break
            continue
        op = item["op"]
        if op == "start":
            if turn is not None:
                log("start: this adapter runs one turn; a second start is ignored")
            elif item.get("agent") != "codex":
                record("turn_end", ok=False, error="%s drives codex only, not %r" % (NAME, item.get("agent")), session_id="")
            elif item.get("resume"):
                record("turn_end", ok=False, error="%s does not resume sessions (it declares no \"resume\")" % NAME, session_id="")
            else:
                turn = Turn(item)
        elif op == "close":
            if closing:
                continue
            closing = True
            if turn is None or turn.reported:
                break
            turn.stop()  # the caller is gone (no-op if the CLI has exited); "done" reports the turn
        elif op in ("send", "interrupt"):
            # This adapter claims neither.
            log("unexpected command %r: this adapter supports a single turn and nothing else (hello supports [])" % op)
            if turn is not None and turn.proc.poll() is None:
                turn.proc.kill()
                turn.proc.wait()
            sys.stdout.flush()
            os._exit(3)
        else:
            log("unknown op %r; ignored" % op)
    record("end", ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
