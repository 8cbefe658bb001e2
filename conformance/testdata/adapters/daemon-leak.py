#!/usr/bin/env python3
"""daemon-leak.py: a BUGGY test adapter (profile native, agent codex,
supports nothing). See README.md in this directory.

It runs one correct `codex exec --json` turn per case, but on `start` it
also leaves two helper processes behind that outlive it: one started in a
new session (`setsid`, as a "language server" or "file watcher" a library
launches detached), and one by a double fork (the classic daemon: its
parent exits at once, so it is nobody's child). Both sleep for five
minutes. Neither is in the adapter's process group, and neither is a CLI.

How real adapters look: IDE bridges and desktop wrappers that start a
watcher or a local server per session with `detached: true` / `setsid` and
never stop it.

A correct judge reports both (lifecycle/no-stray-process FAIL, with their
command lines) and leaves nothing running after the run.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


def leave_helpers():
    # One in a new session.
    subprocess.Popen(["sleep", "300"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # One by a double fork: the middle process exits at once.
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execvp("sleep", ["sleep", "301"])
        os._exit(0)
    os.waitpid(pid, 0)


def run_turn(prompt):
    codex = os.environ.get("CODEX_EXECUTABLE") or "codex"
    proc = subprocess.Popen([codex, "exec", "--json", "--skip-git-repo-check", prompt],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    completed = False
    error = ""
    for raw in proc.stdout:
        try:
            ev = json.loads(raw)
        except ValueError:
            continue
        h.write(ev)
        if ev.get("type") == "turn.completed":
            completed = True
        if ev.get("type") == "turn.failed":
            error = (ev.get("error") or {}).get("message", "turn failed")
    code = proc.wait()
    ok = completed and code == 0
    h.turn_end(ok, error or "codex exited %d" % code, "")


def main():
    h.record("hello", profile="native", agents=["codex"], supports=[], name="daemon-leak", version="1")
    for raw in sys.stdin:
        if not raw.strip():
            continue
        cmd = json.loads(raw)
        if cmd.get("op") == "start":
            leave_helpers()
            run_turn(cmd.get("prompt", ""))
        elif cmd.get("op") == "close":
            break
    h.record("end", ok=True)


if __name__ == "__main__":
    main()
