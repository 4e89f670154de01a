"""`kalah engine BOT [--server HOST:PORT | ws://HOST:PORT/kgp]`: one of our bots plays as a KGP agent (a KGP client).

In the Kalah Game Protocol the agent connects to the server: this command connects a hosted
bot (`random`, `greedy`, `alphabeta:N`, `perfect`) to any KGP 1.x freeplay server, ours
(`kalah serve --kgp-port 2671`, or its websocket at `/kgp` of the main port) or go-kgp (TCP,
or its websocket at `/socket`). A server that sends no `kgp` greeting within
`GREETING_S` seconds (the main port's websocket protocol, say) ends it with one line saying
so. Without `--server` it speaks KGP on its standard
input and output (the server's lines in, its own out; its reports go to standard error), so a
tester (`kalah ladder --engine NAME="kalah engine BOT"`) or any program can run it over pipes.

It says who it is (`info:name`, `auth:token` when given), asks for freeplay, and answers each
`state` with the bot's move and `yield`, thinking in a worker thread for `--think` seconds
(default: half the `time:clock` the server sets, a twentieth under `time:mode absolute`, where
the clock is the whole game's time left; else 1 s); `ping` gets `pong`. It stops when the
server says goodbye, or after `--games` results (our server reports each with
`set arena:result`), or at the end of its input.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, TextIO
from urllib.parse import urlsplit, urlunsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from bots.names import BotNameError, canonical_bot
from bots.players import make_player
from protocol.actions import Sow
from protocol.kgp import Arg, Board, KgpSyntaxError, Line, LineSplitter, Overlong, parse_line


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah engine`."""
    parser.add_argument("bot", help="the bot to connect: random, greedy, alphabeta:N or perfect")
    parser.add_argument("--server", metavar="ADDRESS",
                        help="the KGP server to play on: HOST:PORT over TCP (e.g. 127.0.0.1:2671) or a websocket "
                             "URL (e.g. ws://127.0.0.1:8765/kgp; /kgp when no path is given) (default: KGP on "
                             "stdin/stdout)")
    parser.add_argument("--name", help="the name to play under (info:name; default: the bot id)")
    parser.add_argument("--token", default=os.environ.get("KALAH_KGP_TOKEN"),
                        help="a secret that keeps one identity across connections (auth:token; "
                             "default $KALAH_KGP_TOKEN, none: anonymous)")
    parser.add_argument("--games", type=int, default=0,
                        help="leave after this many results (0: play until the server says goodbye)")
    parser.add_argument("--think", type=float, default=None, metavar="SECONDS",
                        help="thinking time per move (default: half the server's time:clock, else 1)")
    parser.add_argument("--verbose", action="store_true", help="print every KGP line on standard error")


GREETING_S = 5.0
"""How long a server has to send its `kgp` greeting (a KGP server sends it as soon as the connection opens)."""


class NoKgpError(Exception):
    """The address answered, but not as a KGP server (no greeting in time, or a close without one)."""


def server_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` as (host, port); raises ValueError."""
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is neither HOST:PORT nor a ws:// or wss:// URL")
    return host.strip("[]"), int(port)


def websocket_url(text: str) -> str | None:
    """A `ws://` or `wss://` address as the URL to connect to (`/kgp` when it names no path); None for any other
    text; raises ValueError for a websocket URL without a host."""
    if not text.startswith(("ws://", "wss://")):
        return None
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ValueError(f"{text!r}: the port is not a number") from None
    if not parts.hostname:
        raise ValueError(f"{text!r} names no host")
    return urlunsplit(parts._replace(path=parts.path if parts.path not in ("", "/") else "/kgp"))


class Sink(Protocol):
    """Where the agent's lines go: a TCP stream, or standard output."""

    def write(self, data: bytes) -> None:
        """Queue or write bytes."""


class StdoutSink:
    """Standard output as the agent's line sink (written and flushed at once)."""

    def write(self, data: bytes) -> None:
        """Write and flush."""
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


@dataclass
class EngineClient:
    """The agent's side of one KGP connection, playing one bot."""

    bot: str
    writer: Sink
    think: float | None = None
    games: int = 0
    verbose: bool = False
    out: TextIO = sys.stdout
    clock: float | None = None
    absolute: bool = False
    """Whether `time:clock` is the whole game's time left (`time:mode absolute`) rather than this move's."""
    results: int = 0
    open_states: set[int] = field(default_factory=set)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1, 2))

    def __post_init__(self) -> None:
        self.player = make_player(self.bot)
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, name: str, *args: Arg, ref: int | None = None) -> None:
        """Send one command with the next odd id."""
        line = Line(name, args, next(self._ids), ref)
        if self.verbose:
            print(">", line.text(), file=sys.stderr)
        self.writer.write(line.wire())

    def greet(self, line: Line, name: str, token: str | None) -> bool:
        """Answer the server's `kgp` greeting; False if its major version is not 1."""
        if not line.args or line.args[0] != 1:
            self.send("error", "protocol not supported: this agent speaks KGP 1", ref=line.id)
            return False
        self.send("set", "info:name", name)
        self.send("set", "info:authors", "Kalah Arena")
        self.send("set", "info:description", f"the Kalah Arena bot {self.bot}")
        if token:
            self.send("set", "auth:token", token)
        self.send("mode", "freeplay")
        return True

    def handle(self, line: Line) -> bool:
        """Act on one command from the server; False when the session is over."""
        if line.name == "ping":
            self.send("pong", ref=line.id)
        elif line.name == "state" and line.id is not None and line.args and isinstance(line.args[0], Board):
            self.open_states.add(line.id)
            task = asyncio.get_running_loop().create_task(self.answer(line.id, line.args[0]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif line.name == "stop" and line.ref is not None:
            self.open_states.discard(line.ref)
        elif line.name == "set" and len(line.args) >= 2:
            return self.option(str(line.args[0]), line.args[1])
        elif line.name == "error":
            print(f"server error: {line.args[0] if line.args else ''}", file=sys.stderr)
        elif line.name == "goodbye":
            return False
        return True

    def option(self, name: str, value: Arg) -> bool:
        """Keep the clock; report games and results; False once `games` results came in."""
        if name == "time:clock" and isinstance(value, int | float):
            self.clock = float(value)
        elif name == "time:mode":
            self.absolute = value == "absolute"
        elif name == "game:id":
            print(f"game {value}", file=self.out, flush=True)
        elif name == "arena:result":
            self.results += 1
            print(f"result {value}", file=self.out, flush=True)
            if self.games and self.results >= self.games:
                self.send("goodbye")
                return False
        return True

    def budget(self) -> float:
        """Seconds to think about the next move."""
        if self.think is not None:
            return self.think
        if not self.clock:
            return 1.0
        return max(0.05, self.clock / 20 if self.absolute else self.clock / 2)

    async def answer(self, state_id: int, board: Board) -> None:
        """The bot's move for a state (thought in a worker thread), unless the server stopped it meanwhile."""
        position = board.position()
        legal = position.legal_bins()
        if len(legal) > 1:
            try:
                action = await asyncio.to_thread(self.player.decide, position, self.budget())
            except Exception as exc:  # the bot failed: its first legal move, and say so
                print(f"kalah engine: {self.bot} failed ({exc!r}): playing the first legal move", file=sys.stderr)
                action = Sow(legal[0])
            move = action.bin if isinstance(action, Sow) else legal[0]
        else:
            move = legal[0] if legal else 0
        if state_id in self.open_states:
            if move:
                self.send("move", move, ref=state_id)
            self.send("yield", ref=state_id)


async def session(args: argparse.Namespace, client: EngineClient, chunks: AsyncIterator[bytes],
                  drain: Callable[[], Awaitable[None]]) -> int:
    """Read the server's lines and answer them until goodbye, the end, or `--games` results; the exit status."""
    name = args.name or args.bot.replace(":", "-")
    splitter = LineSplitter()
    greeted = False
    async for data in chunks:
        for item in splitter.feed(data):
            if isinstance(item, Overlong):
                continue
            if args.verbose:
                print("<", item, file=sys.stderr)
            try:
                line = parse_line(item)
            except KgpSyntaxError:
                continue
            if line is None:
                continue
            greeted = greeted or line.name == "kgp"
            keep_on = client.greet(line, name, args.token) if line.name == "kgp" else client.handle(line)
            if not keep_on:
                await drain()
                return 0 if line.name != "kgp" and greeted else 1
        await drain()
    return 0 if greeted and (not args.games or client.results >= args.games) else 1


async def greeted_first(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """`chunks`, whose first must come within `GREETING_S` (a KGP server greets at once); else `NoKgpError`."""
    try:
        first = await asyncio.wait_for(anext(chunks), GREETING_S)
    except StopAsyncIteration:
        raise NoKgpError("it closed the connection without a KGP greeting") from None
    except TimeoutError:
        raise NoKgpError(f"it sent no KGP greeting within {GREETING_S:g} s") from None
    if b"kgp" not in first.split(b"\n", 1)[0]:  # `kgp 1 1 0` (some servers number it: `2 kgp 1 1 0`)
        raise NoKgpError(f"it answered {first[:120].decode('utf-8', 'replace').strip()!r}, not a KGP greeting")
    yield first
    async for data in chunks:
        yield data


async def play(args: argparse.Namespace, host: str, port: int) -> int:
    """Connect over TCP, play until goodbye (or `--games` results), and return the exit status."""
    reader, writer = await asyncio.open_connection(host, port)
    client = EngineClient(args.bot, writer, args.think, args.games, args.verbose)

    async def chunks() -> AsyncIterator[bytes]:
        """What the server sends, as it comes."""
        while data := await reader.read(65536):
            yield data

    try:
        return await session(args, client, greeted_first(chunks()), writer.drain)
    finally:
        writer.close()


class WebsocketSink:
    """A websocket as the agent's line sink: each line one text frame, sent in order by a task of its own."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.sender = asyncio.get_running_loop().create_task(self._send())

    def write(self, data: bytes) -> None:
        """Queue one line."""
        self.queue.put_nowait(data.decode())

    async def _send(self) -> None:
        """Send the queued lines until the connection closes."""
        while True:
            text = await self.queue.get()
            try:
                await self.ws.send(text)
            except ConnectionClosed:
                return
            finally:
                self.queue.task_done()

    async def drain(self) -> None:
        """Wait until every queued line is sent (or the connection has closed)."""
        if not self.sender.done():
            await self.queue.join()


async def play_websocket(args: argparse.Namespace, url: str) -> int:
    """KGP over a websocket (a frame per line): connect, play until goodbye (or `--games` results), the status."""
    async with connect(url, open_timeout=GREETING_S * 2, max_size=2**16) as ws:
        sink = WebsocketSink(ws)
        client = EngineClient(args.bot, sink, args.think, args.games, args.verbose)

        async def chunks() -> AsyncIterator[bytes]:
            """Each frame the server sends (one line each), as it comes."""
            try:
                async for message in ws:
                    data = message.encode() if isinstance(message, str) else message
                    yield data if data.endswith(b"\n") else data + b"\r\n"
            except ConnectionClosed:
                return

        try:
            return await session(args, client, greeted_first(chunks()), sink.drain)
        finally:
            sink.sender.cancel()


def connect_failure(exc: BaseException) -> str:
    """What a failed connection to the server came to, in a few words."""
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused: is a KGP server listening there?"
    if isinstance(exc, InvalidStatus):
        return f"it answered HTTP {exc.response.status_code}, not a websocket"
    if isinstance(exc, InvalidHandshake):
        return f"no websocket there ({exc})"
    if isinstance(exc, TimeoutError):
        return "no answer"
    return str(exc) or type(exc).__name__


async def play_stdio(args: argparse.Namespace) -> int:
    """Play on standard input and output until goodbye or the end of the input; reports go to standard error."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        """Hand standard input to the loop (a daemon thread: a blocked read never holds up the exit)."""
        while True:
            data = os.read(sys.stdin.fileno(), 65536)
            loop.call_soon_threadsafe(queue.put_nowait, data)
            if not data:
                return

    threading.Thread(target=pump, name="kgp-stdin", daemon=True).start()

    async def chunks() -> AsyncIterator[bytes]:
        """Standard input, as it comes, until its end."""
        while data := await queue.get():
            yield data

    async def drain() -> None:
        """Standard output is written and flushed line by line: nothing to wait for."""

    client = EngineClient(args.bot, StdoutSink(), args.think, args.games, args.verbose, out=sys.stderr)
    return await session(args, client, chunks(), drain)


def run(args: argparse.Namespace) -> int:
    """Run `kalah engine`."""
    try:
        args.bot = canonical_bot(args.bot)
        url = None if args.server is None else websocket_url(args.server)
        address = None if args.server is None or url is not None else server_address(args.server)
    except (BotNameError, ValueError) as exc:
        print(f"kalah engine: {exc}", file=sys.stderr)
        return 2
    if address is None and url is None:
        try:
            return asyncio.run(play_stdio(args))
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:  # the server side closed our output: nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    try:
        return asyncio.run(play(args, *address) if address is not None else play_websocket(args, url or ""))
    except NoKgpError as exc:
        hint = ("KGP is on the port of `kalah serve --kgp-port` (TCP) or at ws://HOST:PORT/kgp of the main port"
                if address is not None else "is the path the server's KGP endpoint (ours: /kgp, go-kgp's: /socket)?")
        print(f"kalah engine: {args.server} is not a KGP server: {exc} ({hint})", file=sys.stderr)
        return 1
    except (OSError, TimeoutError, InvalidHandshake, InvalidURI, ConnectionClosed) as exc:
        print(f"kalah engine: cannot play on {url or args.server}: {connect_failure(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
