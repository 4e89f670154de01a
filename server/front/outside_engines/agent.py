"""One KGP agent's connection: the greeting, `mode`, `set`, `ping`/`pong`, and `state` requests.

The agent (the client) connects; the server greets it with `kgp 1 1 0` and waits for
`mode freeplay`. From then on the gateway asks it for moves with `Agent.ask`: a numbered
`state` (the board from the agent's side), every `move` referencing it keeps the last one,
until `yield` or the deadline, then `stop`. An agent that let the deadline pass is pinged;
one that does not answer `pong` in time is dropped. Every fault of the agent's own making
(a garbage line, an over-long one, an unknown command or option) gets an `error` line and
changes nothing else; only a duplicate `mode`, flooding, not reading, or silence on a ping
ends the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.kgp import VERSION, Arg, Board, KgpSyntaxError, Line, LineSplitter, Overlong, parse_line
from server.core.rates import RateLimiter
from server.front.outside_engines.links import Link
from server.logs import event as log_event

MIN_TOKEN, MAX_TOKEN = 8, 512
"""Lengths of an `auth:token` the gateway accepts (a shorter one is refused, the agent plays anonymously)."""

INFO_OPTIONS = {"info:name": "name", "info:authors": "authors", "info:author": "authors",
                "info:description": "description"}
"""The `info:*` options kept about an agent (go-kgp also reads `info:author`), by the key they are kept under."""


@dataclass
class AgentLimits:
    """What one agent connection may do, and how long it is waited for."""

    mode_s: float = 20.0
    """Seconds after the greeting by which the agent must have sent `mode` (go-kgp: 20 s)."""
    pong_s: float = 20.0
    """Seconds an agent has to answer a `ping` (go-kgp: 20 s)."""
    rate: float = 100.0
    """Lines a second an agent may send on average."""
    burst: int = 200
    """Lines an agent may send at once."""
    max_refused: int = 1000
    """Lines dropped for rate before the connection is closed."""
    send_buffer: int = 1 << 20
    """Bytes an agent may leave unread before it is dropped."""
    line_limit: int = 16384
    """Longest line read; a longer one is dropped with an error."""


@dataclass
class Answer:
    """What an agent answered to one `state`: its last move (None: none), whether it yielded, its comment."""

    move: int | None
    yielded: bool
    comment: str | None = None


@dataclass
class _Ask:
    """A `state` request still open."""

    id: int
    move: int | None = None
    comment: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    yielded: bool = False


class Agent:
    """One connected agent: reads its lines, answers what it can, and runs the gateway's requests."""

    def __init__(self, link: Link, limits: AgentLimits, on_mode: Callable[[Agent], None],
                 on_close: Callable[[Agent], None]) -> None:
        self.link = link
        self.limits = limits
        self.on_mode = on_mode
        self.on_close = on_close
        self.host = link.host
        self.remote = link.remote
        self.info: dict[str, str] = {}
        """`info:*` options the agent set (name, authors, description)."""
        self.token: str | None = None
        self.comment: str | None = None
        self.mode: str | None = None
        self.closed = asyncio.Event()
        self.close_reason: str | None = None
        self.dropped: str | None = None
        """Why the server dropped the agent (`kill`), if it did: what closed it, whatever the agent did after."""
        self.player_id: str | None = None
        """The arena identity the gateway gave this agent (set when its first game starts)."""
        self.anon_key: str | None = None
        self.event: str | None = None
        """The event the agent asked to enter (`set arena:event ID`), until the gateway has tried."""
        self.event_ref: int | None = None
        """The id of that `set` line (the gateway's `ok` or `error` refers to it)."""
        self.sanity_stage = False
        """Playing `random` for the wins the event it asked for wants first (it is tried again after each game)."""
        self.on_event: Callable[[Agent], None] | None = None
        """Called when the agent asks to enter an event (set by the gateway)."""
        self._last_id = 0
        self._asks: dict[int, _Ask] = {}
        self._pong: asyncio.Future[None] | None = None
        self._limiter = RateLimiter(limits.rate, limits.burst)
        self.opened = time.monotonic()
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- sending ---------------------------------------------------------------------------

    def send(self, name: str, *args: Arg, ref: int | None = None) -> int:
        """Send one command with the next even id (as go-kgp numbers them); returns the id (0 if closed, also when
        this write found the connection lost)."""
        if self.closed.is_set():
            return 0
        self._last_id += 2
        self._write(Line(name, args, self._last_id, ref).wire())
        return 0 if self.closed.is_set() else self._last_id

    def _write(self, data: bytes) -> None:
        """Queue bytes without waiting; an agent that leaves too much unread is dropped."""
        link = self.link
        if link.is_closing():
            self._close("connection lost")
            return
        link.write(data)
        if link.buffered() > self.limits.send_buffer:
            link.abort()
            self._close("stopped reading")

    def error(self, text: str, ref: int | None = None) -> None:
        """Send `error "text"` (referencing the faulty command when it had an id)."""
        self.send("error", text, ref=ref)

    def fault(self, text: str, ref: int | None = None) -> None:
        """A fault of the agent's own making (a garbage line, an unknown command...): it gets an `error`."""
        self.error(text, ref)

    def departure(self) -> str:
        """Why the agent is gone, as a forfeit's stored detail."""
        return f"connection closed ({self.close_reason})"

    def kill(self, reason: str, error: bool = True) -> None:
        """Tell the agent why (unless `error` is false), say goodbye, and close the connection."""
        if self.closed.is_set():
            return
        if error:
            self.error(reason)
        self.dropped = reason
        self._write(b"goodbye\r\n")
        self._close(reason)

    def _close(self, reason: str) -> None:
        """Mark the connection closed (once), release whoever waits on it, and tell the gateway."""
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        for ask in self._asks.values():
            ask.done.set()
        if self._pong is not None and not self._pong.done():
            self._pong.cancel()
        for task in self._tasks:
            task.cancel()
        self.link.close()
        log_event("kgp_agent_closed", remote=self.remote, player=self.player_id, reason=reason)
        self.on_close(self)

    def spawn(self, coro: Any) -> None:
        """Run a task that closing the connection cancels."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- reading ---------------------------------------------------------------------------

    async def serve(self) -> None:
        """Greet the agent, then read and handle its lines until it or the server closes."""
        self.send("kgp", *VERSION)
        self.spawn(self._mode_deadline())
        splitter = LineSplitter(self.limits.line_limit)
        try:
            while not self.closed.is_set():
                data = await self.link.read()
                if not data:
                    break
                for item in splitter.feed(data):
                    if self.closed.is_set():
                        break
                    self._receive(item)
        finally:
            self._close(self.close_reason or "disconnected")

    async def _mode_deadline(self) -> None:
        """Drop an agent that has not asked for an activity in time."""
        await asyncio.sleep(self.limits.mode_s)
        if self.mode is None:
            self.kill(f"Requested no mode within {self.limits.mode_s:g} s")

    def _receive(self, item: str | Overlong) -> None:
        """Handle one line (or an over-long one), within the rate limit."""
        if not self._limiter.allow():
            if self._limiter.refused >= self.limits.max_refused:
                self.kill("too many lines: flooding")
            return
        if isinstance(item, Overlong):
            self.fault(f"line of {item.size} bytes ignored: the limit is {self.limits.line_limit}")
            return
        try:
            line = parse_line(item)
        except KgpSyntaxError as exc:
            self.fault(f"malformed command ignored: {exc}")
            return
        if line is not None:
            self.handle(line)

    def handle(self, line: Line) -> None:
        """Act on one command of the agent."""
        name = line.name
        if name == "mode":
            self._mode(line)
        elif name == "set":
            self._set(line)
        elif name == "pong":
            if self._pong is not None and not self._pong.done():
                self._pong.set_result(None)
        elif name == "ping":
            self.send("pong", ref=line.id)
        elif name in ("move", "yield"):
            self._answer(line)
        elif name == "goodbye":
            self._close("said goodbye")
        elif name not in ("ok", "error"):
            self.fault("Unknown command", ref=line.id)

    def _mode(self, line: Line) -> None:
        """`mode ACTIVITY`: freeplay is served; anything else is refused and the connection closed."""
        if self.mode is not None:
            self.kill('Duplicate "mode" request')
            return
        activity = line.args[0] if line.args else None
        if activity != "freeplay":
            self.send("error", "Unsupported activity", ref=line.id)
            self._write(b"goodbye\r\n")
            self._close(f"unsupported activity {str(activity)[:40]!r}")
            return
        self.mode = "freeplay"
        self.send("ok", ref=line.id)
        self.on_mode(self)

    def _set(self, line: Line) -> None:
        """`set OPTION VALUE`: the info and auth options are kept, `arena:event` goes to the gateway; every other
        option is ignored."""
        if len(line.args) < 2 or not isinstance(line.args[0], str):
            self.fault("set takes an option and a value", ref=line.id)
            return
        option, value = line.args[0], line.args[1]
        text = value if isinstance(value, str) else str(value)
        if option in INFO_OPTIONS:
            self.info[INFO_OPTIONS[option]] = text[:200]
        elif option == "info:comment":
            self.comment = text[:1000]
        elif option == "auth:token":
            if isinstance(value, Board) or not MIN_TOKEN <= len(text) <= MAX_TOKEN:
                self.error(f"token refused: use {MIN_TOKEN} to {MAX_TOKEN} characters (you play anonymously)",
                           ref=line.id)
            else:
                self.token = text  # a token of digits only reads as an integer: its text is the token
        elif option == "auth:forget" and text == self.token:
            self.token = None
        elif option == "arena:event":
            self.event, self.event_ref = text[:64], line.id
            if self.on_event is not None:
                self.on_event(self)

    def _answer(self, line: Line) -> None:
        """`move N` or `yield` for an open state; for a stopped one it is silently ignored."""
        ask = self._asks.get(line.ref) if line.ref is not None else next(iter(self._asks.values()), None)
        if ask is None:
            issued = line.ref is not None and line.ref % 2 == 0 and 0 < line.ref <= self._last_id
            if not issued:
                self.fault("No state associated with id", ref=line.id)
            return
        if line.name == "yield":
            ask.yielded = True
            ask.done.set()
            return
        if len(line.args) != 1 or not isinstance(line.args[0], int):
            self.fault("move takes one integer: the pit, counted from 1", ref=line.id)
            return
        ask.move = line.args[0]
        ask.comment, self.comment = self.comment, None

    # --- the gateway's requests ------------------------------------------------------------

    async def ask(self, board: Board, think_s: float, options: list[tuple[str, Arg]]) -> Answer:
        """Send the options and a `state`, collect moves until `yield` or `think_s`, send `stop`.

        An agent that did not yield is pinged (without holding up the game): no `pong` in
        time closes the connection.
        """
        for option, value in options:
            self.send("set", option, value)
        sid = self.send("state", board)
        ask = _Ask(sid)
        if sid:
            self._asks[sid] = ask
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ask.done.wait(), max(0.0, think_s))
            self._asks.pop(sid, None)
            self.send("stop", ref=sid)
        if not ask.yielded and not self.closed.is_set() and self._pong is None:
            self.spawn(self.check_alive())
        return Answer(ask.move, ask.yielded, ask.comment)

    def interrupt(self) -> None:
        """End every open `state` request now: each gets its `stop` and returns as at its deadline."""
        for ask in self._asks.values():
            ask.done.set()

    async def check_alive(self) -> bool:
        """Send `ping`; whether `pong` came back in time (if not, the connection is closed)."""
        if self._pong is not None:
            return not self.closed.is_set()
        self._pong = asyncio.get_running_loop().create_future()
        self.send("ping")
        try:
            await asyncio.wait_for(asyncio.shield(self._pong), self.limits.pong_s)
        except TimeoutError:
            self.kill(f"received no pong within {self.limits.pong_s:g} s")
            return False
        except asyncio.CancelledError:
            if not self.closed.is_set():
                raise
            return False
        finally:
            self._pong = None
        return True
