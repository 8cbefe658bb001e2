#!/usr/bin/env python3
"""text-mode.py: a CORRECT but unusual test adapter (profile native, agents
gemini and claude, supports interrupt). See README.md in this directory.

It does not stream: it runs the CLI in its one-shot output mode and hands
the caller one event per turn, {"type": "answer", "text": TEXT}:

- Gemini: `gemini -p PROMPT` with the default text output (plus -y or
  --approval-mode default for the permission policy); TEXT is what the CLI
  printed on stdout (its final newline left off); the turn is ok iff the
  CLI exits 0.
- Claude: `claude -p --output-format json PROMPT`; TEXT is the `result` field
  of the one JSON object the CLI prints; the turn is ok iff the CLI exits 0
  and the object says is_error false (its errors, or its result, are the
  turn's error otherwise).

How real adapters look: shell scripts, CI steps and simple wrappers
(`result=$(claude -p "$q" --output-format json | jq -r .result)`, Python
helpers around subprocess.run(["gemini", "-p", q])) that want the answer
and not the stream. Nothing streams, so the caller sees nothing until the
CLI has finished.

Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
turn, end last, exit 0 after close. Stdin of the CLI is closed. A `send`
runs the next turn in a new process (claude --resume=ID with the session id
of the JSON result; gemini --resume latest, since text output names no
session, or the id a `start` asked to resume). Interrupt: SIGINT, then SIGKILL if the CLI has not exited 3 s
later; the adapter always waits for the CLI to exit and then reports what it
printed and turn_end ok:false. `close` during a turn stops it the same way.
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

NAME = "text-mode"
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


ENV_NAMES = {"gemini": "GEMINI_EXECUTABLE", "claude": "CLAUDE_CODE_EXECUTABLE"}


def cli_args(s, prompt):
    if s["agent"] == "gemini":
        args = ["-p", prompt]
        if s["permission"] == "allow":
            args.append("-y")
        elif s["permission"] == "deny":
            args += ["--approval-mode", "default"]
        if s["id"]:  # a session to resume given by the caller
            args += ["--resume", s["id"]]
        elif s["turns"] > 0:
            args += ["--resume", "latest"]
        return args
    args = ["-p", "--output-format", "json"]
    if s["id"]:
        args.append("--resume=" + s["id"])
    return args + [prompt]


class Turn:
    def __init__(self, s, prompt):
        self.session = s
        self.interrupted = ""
        exe = os.environ.get(ENV_NAMES[s["agent"]]) or shutil.which(s["agent"]) or s["agent"]
        self.proc = subprocess.Popen([exe] + cli_args(s, prompt), cwd=s["cwd"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        s["turns"] += 1
        self.out = b""
        self.killer = None
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        self.out = self.proc.stdout.read()
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
        """Writes the answer event and returns (ok, error)."""
        s, code = self.session, self.proc.returncode
        text, error = self.out.decode("utf-8", "replace"), ""
        if s["agent"] == "gemini":
            if text.endswith("\n"):
                text = text[:-1]
        else:
            try:
                res = json.loads(text) if text.strip() else None
            except ValueError:
                res = None
            if not isinstance(res, dict):
                error = "claude printed no JSON result"
                text = ""
            else:
                if isinstance(res.get("session_id"), str):
                    s["id"] = res["session_id"]
                text = res.get("result") if isinstance(res.get("result"), str) else ""
                if res.get("is_error"):
                    errs = res.get("errors")
                    error = "; ".join(str(e) for e in errs) if isinstance(errs, list) and errs else (text or str(res.get("subtype") or "error result"))
        write({"type": "answer", "text": text})
        if self.interrupted:
            return False, self.interrupted
        if code is not None and code < 0:
            return False, "%s was killed by signal %d" % (s["agent"], -code)
        if code != 0:
            return False, (error + "; " if error else "") + "%s exited with code %s" % (s["agent"], code)
        if error:
            return False, error
        return True, ""


def main():
    record("hello", profile="native", agents=["gemini", "claude"], supports=["interrupt"], name=NAME, version="1")
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
            elif cmd.get("agent") not in ENV_NAMES:
                record("turn_end", ok=False, error="%s drives gemini and claude, not %r" % (NAME, cmd.get("agent")), session_id="")
            else:
                session = {"agent": cmd["agent"], "cwd": cmd.get("cwd") or os.getcwd(), "permission": cmd.get("permission"),
                           "id": cmd.get("resume") or "", "turns": 0}
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
