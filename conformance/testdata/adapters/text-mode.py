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
later, to the CLI's process group (it runs in a session of its own); the adapter always waits for the CLI to exit and then reports what it
printed and turn_end ok:false. `close` during a turn stops it the same way.
"""

import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


class Turn(h.Turn):
    escalation = ((3, signal.SIGKILL),)
    group_signals = True
    out = b""

    def argv(self, prompt):
        s = self.session
        if s.agent == "gemini":
            args = ["-p", prompt]
            if s.permission == "allow":
                args.append("-y")
            elif s.permission == "deny":
                args += ["--approval-mode", "default"]
            if s.id:  # a session to resume given by the caller
                args += ["--resume", s.id]
            elif s.turns > 0:
                args += ["--resume", "latest"]
        else:
            args = ["-p", "--output-format", "json"]
            if s.id:
                args.append("--resume=" + s.id)
            args.append(prompt)
        return [h.executable(s.agent)] + args

    def read(self, out):
        self.out = out.read()

    def answer(self, text):
        """Hands the turn's answer on: one event of its own."""
        h.write({"type": "answer", "text": text})

    def finish(self):
        """Writes the answer event and returns (ok, error)."""
        s, code = self.session, self.proc.returncode
        text, error = self.out.decode("utf-8", "replace"), ""
        if s.agent == "gemini":
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
                    s.id = res["session_id"]
                text = res.get("result") if isinstance(res.get("result"), str) else ""
                if res.get("is_error"):
                    errs = res.get("errors")
                    error = "; ".join(str(e) for e in errs) if isinstance(errs, list) and errs else (text or str(res.get("subtype") or "error result"))
        self.answer(text)
        if self.interrupted:
            return False, self.interrupted
        if code is not None and code < 0:
            return False, "%s was killed by signal %d" % (s.agent, -code)
        if code != 0:
            return False, (error + "; " if error else "") + "%s exited with code %s" % (s.agent, code)
        if error:
            return False, error
        return True, ""


if __name__ == "__main__":
    sys.exit(h.Adapter("text-mode", ["gemini", "claude"], ["interrupt"], sigint=True, turn_class=Turn).run())
