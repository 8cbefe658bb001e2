#!/usr/bin/env python3
"""unified-renamed.py: a CORRECT but unusual test adapter (profile unified,
agent codex, supports multi_turn, resume and interrupt). See README.md in
this directory.

It translates `codex exec --json` into the unified events (docs/protocols/unified.md)
completely: the text (answers as assistant textChunks; reasoning, error items
and error events as textChunks with role null), every tool's input, output,
success and error, the file changes, and the usage of every turn. It differs
from the reference translation (reference/MAPPING.md) only in
choices the unified model leaves to the adapter:

- a command execution is the tool `exec` (the reference says `shell`);
- a command's result is an object {"stdout": <aggregated_output>,
  "exit_code": N} (the reference hands the output string alone);
- tool ids are the adapter's own, t1, t2, ... in the order tools start, over
  the whole session (the reference keeps Codex's item ids, qualified per
  process: item_0, item_0#2).

How real adapters look: every unified adapter names tools and shapes results
its own way (Dart/TypeScript agent SDK wrappers that call the shell tool
"bash", "exec" or "run_command", wrap results in {stdout, stderr,
exitCode}, and number tool calls themselves, since Codex restarts item_N in
every process). None of that loses anything the CLI said.

Harness protocol (conformance/HARNESS.md): hello first, one turn_end per
turn, end last, exit 0 after close. One `codex exec` process per turn, the
next resuming the thread (`codex exec ... resume ID PROMPT`). Interrupt:
SIGINT, SIGTERM 2 s later, SIGKILL 2 s after that, always waiting for the
process. Usage: Codex reports thread totals; each turnCompleted carries the
turn's part (the difference from the previous total), sessionEnded's
finalUsage the sum.

With the argument `new-thread` it runs every turn as a fresh `codex exec`
(no `resume`, and no `resume` in its hello), as AI SDK providers that send
the whole conversation again do: each process is a thread of its own, so
each turn's usage is what its turn.completed says. That is right for usage,
and wrong for the session: the thread is never continued.
"""

import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness as h  # noqa: E402


NEW_THREAD = len(sys.argv) > 1 and sys.argv[1] == "new-thread"


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


SANDBOX_MODES = {"read-only": "readOnly", "workspace-write": "workspaceWrite", "danger-full-access": "fullAccess"}
CHANGE_TYPES = {"add": "created", "delete": "deleted"}


def as_int(v):
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


class Translator:
    """Codex lines -> unified events, for one session."""

    def __init__(self, cwd, sandbox, model):
        self.cwd, self.sandbox, self.model = cwd, sandbox, model
        self.sid = ""
        self.started = False
        self.n_events = 0
        self.n_tools = 0
        self.turn_no = 0
        self.tools = {}  # (turn_no, item id) -> our tool id
        self.open = []  # our ids of the tools of this turn not completed yet
        self.output = {}  # our id -> command output reported so far
        self.prev = None  # Codex's thread totals at the last turn.completed
        self.total = None  # sum of the turns' usage

    def emit(self, type_, **fields):
        self.start_session()
        self.n_events += 1
        ev = {"type": type_, "id": "ev-%d" % self.n_events, "sessionId": self.sid, "timestamp": now()}
        ev.update(fields)
        h.write(ev)

    def start_session(self):
        if self.started:
            return
        self.started = True
        config = {"agentType": "codex", "workingDirectory": self.cwd, "sandboxMode": SANDBOX_MODES[self.sandbox]}
        if self.model:
            config["model"] = self.model
        self.n_events += 1
        h.write({"type": "sessionStarted", "id": "ev-%d" % self.n_events, "sessionId": self.sid, "timestamp": now(),
               "agentType": "codex", "config": config})

    def begin_turn(self):
        self.turn_no += 1
        self.open = []
        if NEW_THREAD:
            self.prev = None  # a new thread: its totals start at zero

    def text(self, content, role):
        self.emit("textChunk", content=content, isPartial=False, role=role)

    def line(self, obj):
        t = obj.get("type")
        if t == "thread.started":
            if isinstance(obj.get("thread_id"), str) and not self.sid:
                self.sid = obj["thread_id"]
            self.start_session()
        elif t == "turn.completed":
            usage = obj.get("usage")
            if isinstance(usage, dict):
                self.emit("turnCompleted", usage=self.turn_usage(usage))
            else:
                self.emit("turnCompleted")
        elif t == "turn.failed":
            self.emit("turnCompleted")
        elif t == "error":
            self.text(str(obj.get("message", "")), None)
        elif t in ("item.started", "item.updated", "item.completed") and isinstance(obj.get("item"), dict):
            self.item(t, obj["item"])

    def turn_usage(self, u):
        cur = {k: as_int(u.get(k)) for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")}
        prev = self.prev or {k: 0 for k in cur}
        self.prev = cur
        d = {k: cur[k] - prev[k] for k in cur}
        out = {"inputTokens": d["input_tokens"], "outputTokens": d["output_tokens"], "cachedTokens": d["cached_input_tokens"]}
        if "reasoning_output_tokens" in u:
            out["reasoningTokens"] = d["reasoning_output_tokens"]
        out["totalTokens"] = out["inputTokens"] + out["outputTokens"]
        if self.total is None:
            self.total = dict(out)
        else:
            for k, v in out.items():
                self.total[k] = self.total.get(k, 0) + v
        return out

    def item(self, ev, it):
        kind = it.get("type")
        if kind == "agent_message":
            if ev == "item.completed":
                self.text(str(it.get("text", "")), "assistant")
            return
        if kind == "reasoning":
            if ev == "item.completed" and str(it.get("text", "")).strip():
                self.text(str(it["text"]), None)
            return
        if kind == "error":
            if ev == "item.completed":
                self.text(str(it.get("message", "")), None)
            return
        start = tool_start(it)
        if start is None:
            return  # an item type this adapter does not know
        key = (self.turn_no, it.get("id"))
        tid = self.tools.get(key)
        if tid is None:
            self.n_tools += 1
            tid = self.tools[key] = "t%d" % self.n_tools
            self.open.append(tid)
            name, args = start
            self.emit("toolStarted", toolId=tid, toolName=name, arguments=args)
        if tid not in self.open:
            return  # completed already
        if ev == "item.updated":
            self.progress(tid, it)
        elif ev == "item.completed":
            self.complete(tid, it)

    def progress(self, tid, it):
        kind = it.get("type")
        if kind == "command_execution":
            prev, cur = self.output.get(tid, ""), it.get("aggregated_output") or ""
            self.output[tid] = cur
            if cur and cur != prev:
                self.emit("toolProgress", toolId=tid, output=cur[len(prev):] if cur.startswith(prev) else cur)
        elif kind == "todo_list" and it.get("items") is not None:
            self.emit("toolProgress", toolId=tid, output=json.dumps(it["items"], separators=(",", ":")))

    def complete(self, tid, it):
        self.open.remove(tid)
        kind, status = it.get("type"), it.get("status")
        fields = {"toolId": tid, "success": True}
        if kind == "command_execution":
            code = it.get("exit_code")
            fields["result"] = {"stdout": it.get("aggregated_output") or "", "exit_code": code}
            if status != "completed" or (code or 0) != 0:
                fields["success"] = False
                if status == "declined":
                    fields["error"] = "declined"
                elif code:
                    fields["error"] = "exit code %s" % code
                else:
                    fields["error"] = "command %s" % status
        elif kind == "file_change":
            if status != "completed":
                fields.update(success=False, error="file change %s" % status)
            else:
                for c in it.get("changes") or []:
                    if isinstance(c, dict):
                        self.emit("fileChanged", filePath=str(c.get("path", "")), changeType=CHANGE_TYPES.get(c.get("kind"), "modified"))
        elif kind == "mcp_tool_call":
            if it.get("result") is not None:
                fields["result"] = it["result"]
            err = it.get("error")
            if err is not None:
                msg = err.get("message") if isinstance(err, dict) else None
                fields.update(success=False, error=msg or json.dumps(err))
            if status not in (None, "", "completed"):
                fields["success"] = False
                fields.setdefault("error", "mcp tool call %s" % status)
        elif kind == "web_search":
            if it.get("action") is not None:
                fields["result"] = it["action"]
        elif kind == "todo_list":
            fields["result"] = {"items": it.get("items")}
        elif kind == "collab_tool_call":
            fields["result"] = {"agents_states": it.get("agents_states")}
            if status not in (None, "", "completed"):
                fields.update(success=False, error="collab tool call %s" % status)
        self.emit("toolCompleted", **fields)

    def end_turn(self, why):
        """Closes the tools a turn left open (interrupt, crash)."""
        for tid in list(self.open):
            self.open.remove(tid)
            self.emit("toolCompleted", toolId=tid, success=False, error=why)

    def end_session(self, reason, error):
        fields = {"reason": reason}
        if error:
            fields["error"] = error
        if self.total is not None:
            fields["finalUsage"] = self.total
        self.emit("sessionEnded", **fields)


def tool_start(it):
    kind = it.get("type")
    if kind == "command_execution":
        return "exec", {"command": it.get("command", "")}
    if kind == "file_change":
        return "file_change", {"changes": it.get("changes") or []}
    if kind == "mcp_tool_call":
        args = it.get("arguments")
        return "%s/%s" % (it.get("server", ""), it.get("tool", "")), args if isinstance(args, dict) else {"input": args}
    if kind == "web_search":
        return "web_search", {"query": it.get("query", ""), "action": it.get("action")}
    if kind == "todo_list":
        return "todo_list", {"items": it.get("items")}
    if kind == "collab_tool_call":
        return "collab/%s" % it.get("tool", ""), {"sender_thread_id": it.get("sender_thread_id", ""),
                                                   "receiver_thread_ids": it.get("receiver_thread_ids"), "prompt": it.get("prompt")}
    return None


class Turn(h.Turn):
    terminal_event = "turn.completed"

    def spawn(self, prompt):
        s = self.session
        args = ["exec", "--json", "--skip-git-repo-check", "-s", h.sandbox_of(s.permission)]
        if s.model:
            args += ["-m", s.model]
        if s.id and not NEW_THREAD:
            args += ["resume", s.id]
        feed_stdin = prompt.startswith("-")
        args.append("-" if feed_stdin else prompt)  # a prompt that reads as a flag goes on stdin
        proc = subprocess.Popen([h.executable("codex")] + args, cwd=s.cwd, stdin=subprocess.PIPE if feed_stdin else subprocess.DEVNULL,
                                stdout=subprocess.PIPE)
        if feed_stdin:
            try:
                proc.stdin.write(prompt.encode("utf-8"))
            finally:
                proc.stdin.close()
        return proc

    def event(self, obj):
        h.call(self.translate, obj)  # translated on the loop's thread, in order

    def translate(self, obj):
        self.observe(obj)
        self.session.tr.line(obj)


class UnifiedRenamed(h.Adapter):
    def __init__(self):
        if NEW_THREAD:
            super().__init__("unified-renamed-new-thread", ["codex"], ["multi_turn", "interrupt"], profile="unified", sigint=True, turn_class=Turn)
        else:
            super().__init__("unified-renamed", ["codex"], ["multi_turn", "resume", "interrupt"], profile="unified", sigint=True, turn_class=Turn)
        self.last = ("completed", "")  # the last turn's outcome, for sessionEnded

    def open(self, cmd):
        s = super().open(cmd)
        s.tr = Translator(s.cwd, h.sandbox_of(s.permission), s.model)
        s.tr.sid = s.id
        return s

    def new_turn(self, prompt):
        self.session.tr.begin_turn()
        return super().new_turn(prompt)

    def interrupt(self):
        # A turn whose CLI has exited but is not reported yet counts as
        # interrupted too.
        if self.turn is not None:
            self.turn.interrupt("interrupted")
        else:
            h.log("interrupt: no running turn; ignored")

    def outcome(self, turn):
        ok, error = turn.finish()
        if not turn.terminal or turn.interrupted:
            self.session.tr.end_turn("interrupted" if turn.interrupted else "the turn ended before the tool completed")
        self.last = ("completed", "") if ok else ("cancelled" if turn.interrupted else "failed", error)
        return ok, error

    def end(self):
        if self.session is not None:
            self.session.tr.end_session(*self.last)


if __name__ == "__main__":
    sys.exit(UnifiedRenamed().run())
