"""_harness.py: what the Python test adapters in this directory share; not an
adapter itself. See README.md in this directory.

The harness side of conformance/HARNESS.md: JSON lines to stdout (write,
record, turn_end), notes to stderr (log), the runner's commands from stdin
(read_commands). The CLI side: the executables (CODEX_EXECUTABLE,
CLAUDE_CODE_EXECUTABLE, GEMINI_EXECUTABLE, else on PATH), their argv, and
what their JSON lines say about the session and the turn. Turn is one CLI
process, Adapter the loop of a session that runs one per turn; both do what
a correct adapter does, and an adapter overrides where it does otherwise
(its planted bug, or its unusual behaviour).

An adapter imports it from its own directory:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _harness as h
"""

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]  # log's prefix; Adapter sets it
# The loop's input, taken one at a time: ("cmd", dict) | ("done", Turn) |
# ("call", fn, args), fn to be called on the loop's thread.
EVENTS = queue.Queue()
OUT_LOCK = threading.Lock()


def write(obj):
    """Writes one JSON line to stdout, whole, from any thread."""
    data = (json.dumps(obj) + "\n").encode("utf-8")
    with OUT_LOCK:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def record(kind, **fields):
    write(dict(agentconform=kind, **fields))


def turn_end(ok, error, session_id):
    fields = {"ok": ok, "session_id": session_id}
    if not ok:
        fields["error"] = error
    record("turn_end", **fields)


def refuse(error):
    """Answers a command that starts no turn (a start or send refused)."""
    record("turn_end", ok=False, error=error, session_id="")


def log(msg):
    sys.stderr.write("[%s] %s\n" % (NAME, msg))
    sys.stderr.flush()


def read_commands():
    """Puts the runner's commands on EVENTS, and a close when stdin ends without one."""
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


def call(fn, *args):
    """Has the loop call fn(*args) on its thread, after what EVENTS holds now."""
    EVENTS.put(("call", fn, args))


def call_later(delay, fn, *args):
    """Has the loop call fn(*args) delay seconds from now; returns the timer."""
    t = threading.Timer(delay, EVENTS.put, args=(("call", fn, args),))
    t.daemon = True
    t.start()
    return t


ENV_NAMES = {"codex": "CODEX_EXECUTABLE", "gemini": "GEMINI_EXECUTABLE", "claude": "CLAUDE_CODE_EXECUTABLE"}


def executable(agent):
    return os.environ.get(ENV_NAMES[agent]) or shutil.which(agent) or agent


def sandbox_of(permission):
    return "read-only" if permission == "deny" else "workspace-write"


def cli_args(agent, prompt, permission, resume, max_turns=0):
    """One streaming turn: codex exec --json, gemini -o stream-json, claude -p
    stream-json (with the caller's turn limit, when it set one)."""
    if agent == "codex":
        args = ["exec", "--json", "--skip-git-repo-check", "-s", sandbox_of(permission)]
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
    if max_turns:
        args += ["--max-turns", str(max_turns)]
    return args + [prompt]


def parse(raw):
    """A CLI's stdout line as a JSON object, or None (blank, not JSON, not an object)."""
    line = raw.rstrip(b"\r\n")
    if not line.strip():
        return None
    try:
        obj = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        log("skipping a line that is not JSON: %r" % line[:120])
        return None
    return obj if isinstance(obj, dict) else None


def observe(agent, obj):
    """What one CLI event says: (the session id it names or None, whether it
    is the turn's terminal event, the turn's error it reports or None)."""
    t = obj.get("type")
    if agent == "codex":
        if t == "thread.started" and isinstance(obj.get("thread_id"), str):
            return obj["thread_id"], False, None
        if t == "turn.completed":
            return None, True, None
        if t == "turn.failed":
            err = obj.get("error")
            return None, True, (err.get("message") if isinstance(err, dict) else "") or "turn failed"
    elif agent == "gemini":
        if t == "init" and isinstance(obj.get("session_id"), str):
            return obj["session_id"], False, None
        if t == "result":
            if obj.get("status") == "success":
                return None, True, None
            err = obj.get("error")
            return None, True, (err.get("message") if isinstance(err, dict) else "") or "result status %s" % obj.get("status")
    else:
        if t == "system" and obj.get("subtype") == "init" and isinstance(obj.get("session_id"), str):
            return obj["session_id"], False, None
        if t == "result":
            if not obj.get("is_error"):
                return None, True, None
            errs = obj.get("errors")
            return None, True, "; ".join(str(e) for e in errs) if isinstance(errs, list) and errs else str(obj.get("result") or obj.get("subtype") or "error result")
    return None, False, None


class Session:
    """What a start asked for; id is the session to resume, then the CLI's."""

    def __init__(self, cmd):
        self.agent = cmd.get("agent")
        self.cwd = cmd.get("cwd") or os.getcwd()
        self.permission = cmd.get("permission")
        self.model = cmd.get("model") or ""
        self.id = cmd.get("resume") or ""
        self.max_turns = cmd.get("max_turns") or 0
        self.turns = 0  # turns started


class Turn:
    """One turn, one CLI process: stdin /dev/null, stdout read on a thread of
    its own that hands each JSON object line to event() and puts ("done",
    turn) on EVENTS once the CLI has exited; the loop then reports finish().
    A subclass sets its own state before calling Turn.__init__."""

    terminal_event = "its terminal event"  # what a CLI that exits without it is said to lack
    escalation = ((2, signal.SIGTERM), (4, signal.SIGKILL))  # after the SIGINT of interrupt, while the CLI runs
    # group_signals starts the CLI in a session of its own and signals its
    # process group, so that a CLI behind its npm launcher (Gemini's
    # ignores signals) gets them; the default is the pid alone, as most
    # wrappers do.
    group_signals = False

    def __init__(self, session, prompt):
        self.session = session
        self.terminal, self.error, self.interrupted = False, "", ""
        self.timers = []
        self.proc = self.spawn(prompt)
        session.turns += 1
        threading.Thread(target=self.pump, daemon=True).start()

    def argv(self, prompt):
        s = self.session
        return [executable(s.agent)] + cli_args(s.agent, prompt, s.permission, s.id, s.max_turns)

    def spawn(self, prompt):
        return subprocess.Popen(self.argv(prompt), cwd=self.session.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                start_new_session=self.group_signals)

    def pump(self):
        self.read(self.proc.stdout)
        self.proc.wait()
        self.proc.stdout.close()
        EVENTS.put(("done", self))

    def read(self, out):
        for raw in out:
            obj = parse(raw)
            if obj is not None:
                self.event(obj)

    def event(self, obj):
        """A CLI event: noted and handed on."""
        self.observe(obj)
        write(obj)

    def observe(self, obj):
        sid, terminal, error = observe(self.session.agent, obj)
        if sid is not None:
            self.session.id = sid
        if terminal:
            self.terminal = True
        if error is not None:
            self.error = error

    def interrupt(self, why):
        """SIGINT, then the escalation while the CLI runs; "done" reports the turn."""
        if self.interrupted:
            return
        self.interrupted = why
        self.signal(signal.SIGINT)
        for delay, sig in self.escalation:
            self.timers.append(call_later(delay, self.signal, sig))

    def signal(self, sig):
        if self.proc.poll() is None:
            if self.group_signals:
                try:
                    os.killpg(self.proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            else:
                self.proc.send_signal(sig)

    def kill(self):
        """SIGKILL, as signal() sends it, and a wait for the CLI's exit."""
        self.signal(signal.SIGKILL)
        self.proc.wait()

    def finish(self):
        """The turn's (ok, error), once the CLI has exited."""
        agent, code = self.session.agent, self.proc.returncode
        if self.interrupted:
            return False, self.interrupted
        if self.error:
            return False, self.error
        if code is not None and code < 0:
            return False, "%s was killed by signal %d" % (agent, -code)
        if code != 0:
            return False, "%s exited with code %s" % (agent, code)
        if not self.terminal:
            return False, "%s exited without %s" % (agent, self.terminal_event)
        return True, ""



class GroupTurn(Turn):
    """A Turn whose CLI runs in a session of its own and is signalled as a
    process group (what an adapter must do for a CLI behind its npm
    launcher)."""

    group_signals = True

class Adapter:
    """The loop of an adapter that runs its CLI once per turn: hello, then one
    message of EVENTS at a time, end after close. Each method does what a
    correct adapter does; an adapter overrides what it does otherwise.

    refusal: the turn_end error for a start with an agent it does not drive
    (%r the agent); sigint: signal mode, SIGINT is the interrupt op;
    turn_class: the Turn (sub)class it runs."""

    turn_class = Turn

    def __init__(self, name, agents, supports, profile="native", sigint=False, refusal=None, turn_class=None):
        global NAME
        NAME = name
        if turn_class is not None:
            self.turn_class = turn_class
        self.name, self.agents, self.supports, self.profile, self.sigint = name, agents, supports, profile, sigint
        self.refusal = refusal or "%s drives %s, not %%r" % (name, " and ".join(agents) if len(agents) > 1 else agents[0] + " only")
        self.session, self.turn, self.pending, self.closing = None, None, [], False

    def run(self):
        record("hello", profile=self.profile, agents=self.agents, supports=self.supports, name=self.name, version="1")
        threading.Thread(target=read_commands, daemon=True).start()
        if self.sigint:
            signal.signal(signal.SIGINT, lambda *_: EVENTS.put(("cmd", {"op": "interrupt"})))
        while True:
            msg = EVENTS.get()
            if msg[0] == "call":
                msg[1](*msg[2])
            elif msg[0] == "done":
                if self.done(msg[1]):
                    break
            elif self.command(msg[1]):
                break
        self.end()
        record("end", ok=True)
        return 0

    def command(self, cmd):
        """Handles one command; True when the session is over."""
        op = cmd["op"]
        if op == "start":
            self.start(cmd)
        elif op == "send":
            self.send(cmd)
        elif op == "interrupt":
            self.interrupt()
        elif op == "close":
            return self.close()
        else:
            self.unknown(op)
        return False

    def start(self, cmd):
        if self.session is not None:
            log("start: a session is already running; ignored")
        elif cmd.get("agent") not in self.agents:
            refuse(self.refusal % (cmd.get("agent"),))
        else:
            self.session = self.open(cmd)
            self.turn = self.new_turn(cmd.get("prompt") or "")

    def open(self, cmd):
        return Session(cmd)

    def new_turn(self, prompt):
        return self.turn_class(self.session, prompt)

    def send(self, cmd):
        if self.session is None:
            refuse("send before start")
        elif self.turn is not None:
            self.pending.append(cmd.get("prompt") or "")
        else:
            self.turn = self.new_turn(cmd.get("prompt") or "")

    def interrupt(self):
        if self.turn is None:
            log("interrupt: no running turn; ignored")
        elif self.turn.proc.poll() is None:
            self.turn.interrupt("interrupted")

    def close(self):
        """True when the session is over; else the running turn's "done" ends it."""
        if self.closing:
            return False
        self.closing, self.pending = True, []
        if self.turn is None:
            return True
        if self.turn.proc.poll() is None:
            self.stop(self.turn)
        return False

    def stop(self, turn):
        """The caller is gone while the CLI runs: stops it."""
        turn.interrupt("closed during the turn")

    def unknown(self, op):
        pass

    def done(self, turn):
        """A turn's CLI has exited: reports the turn; True when the session is over."""
        for t in turn.timers:
            t.cancel()
        ok, error = self.outcome(turn)
        turn_end(ok, error, self.session.id)
        self.turn = None
        if self.closing:
            return True
        if self.pending:
            self.turn = self.new_turn(self.pending.pop(0))
        return False

    def outcome(self, turn):
        return turn.finish()

    def end(self):
        """Before the end record."""
