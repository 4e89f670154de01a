"""What the server benchmarks share: `kalah serve` in a child process, a lean websocket client, /proc figures.

`spawn_server` starts the server on a free port over a fresh database and returns its URL;
`LeanConnection` is a cheap client (the websockets sans-I/O protocol on a bare asyncio
transport) that can pick its source address, shrink its receive buffer and stop reading;
`proc_usage` and `rss` read a process's CPU time and memory from /proc.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import math
import os
import re
import socket
import sys
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, cast

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.protocol import State
from websockets.uri import parse_uri

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol import Sow, Swap, Transfer  # noqa: E402
from protocol.actions import Action  # noqa: E402
from server.edge.gc_tuning import keep_heap_frozen  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def action_msg(action: Action, match_id: str, ply: int) -> str:
    """The wire text of an action."""
    if isinstance(action, Sow):
        return json.dumps({"type": "move", "match_id": match_id, "ply": ply, "bin": action.bin})
    if isinstance(action, Swap):
        return json.dumps({"type": "swap", "match_id": match_id, "ply": ply})
    assert isinstance(action, Transfer)
    return json.dumps({"type": "transfer", "match_id": match_id, "ply": ply, "src": action.src, "dst": action.dst})


class HandshakeRefused(ConnectionError):
    """The server answered the opening handshake with an HTTP error (429: address at its cap, 503: full)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"handshake refused with HTTP {status}")
        self.status = status


class LeanConnection(asyncio.Protocol):
    """A lightweight websocket client: the websockets sans-I/O protocol on a bare asyncio transport.

    The load generators run thousands of these, so it skips the per-message tasks and queues of
    the full asyncio client; the server sees ordinary websocket connections.
    """

    def __init__(self, url: str) -> None:
        self.protocol = ClientProtocol(parse_uri(url), max_size=2**22)
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.handler: Callable[[bytes], None] | None = None

    @classmethod
    async def open(cls, url: str, local_addr: str | None = None, rcvbuf: int | None = None) -> LeanConnection:
        """Connect (from `local_addr`, with a `rcvbuf`-byte receive buffer if given) and finish the handshake."""
        host, port = url.removeprefix("ws://").split(":")
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if rcvbuf is not None:  # before connecting, so the window the server sees is small from the start
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if local_addr is not None:
                sock.bind((local_addr, 0))
            sock.setblocking(False)
            await loop.sock_connect(sock, (host, int(port)))
        except BaseException:
            sock.close()
            raise
        _, conn = await loop.create_connection(lambda: cls(url), sock=sock)
        try:
            await asyncio.wait_for(conn.opened, 60)
        except BaseException:
            conn.abort()
            raise
        return conn

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Send the opening handshake."""
        self.transport = cast(asyncio.Transport, transport)
        self.protocol.send_request(self.protocol.connect())
        self.flush()

    def data_received(self, data: bytes) -> None:
        """Feed bytes to the protocol; hand each text message on (answering pings by the way)."""
        self.protocol.receive_data(data)
        for ev in self.protocol.events_received():
            if isinstance(ev, Response):
                if not self.opened.done():
                    if ev.status_code == 101:
                        self.opened.set_result(None)
                    else:
                        self.opened.set_exception(HandshakeRefused(ev.status_code))
            elif isinstance(ev, Frame) and ev.opcode is Opcode.TEXT:
                if self.handler is not None:
                    self.handler(bytes(ev.data))
                else:
                    self.inbox.put_nowait(bytes(ev.data))
        self.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        """Note the end of the connection."""
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("connection lost"))
        if not self.closed.done():
            self.closed.set_result(None)

    @property
    def close_reason(self) -> str:
        """How the server ended the connection: its close code and reason, or `reset` without a close frame."""
        rcvd = self.protocol.close_rcvd
        return "reset" if rcvd is None else f"{rcvd.code} {rcvd.reason}".strip()

    def flush(self) -> None:
        """Write whatever the protocol has to send."""
        assert self.transport is not None
        for data in self.protocol.data_to_send():
            if data:
                self.transport.write(data)
            elif self.transport.can_write_eof():
                self.transport.write_eof()

    def send(self, text: str) -> None:
        """Send one text message now (ConnectionError once the connection is closing)."""
        if self.transport is None or self.transport.is_closing() or self.protocol.state is not State.OPEN:
            raise ConnectionError("connection closed")
        self.protocol.send_text(text.encode())
        self.flush()

    def stop_reading(self) -> None:
        """Read nothing more from the socket (a client that stalls: the server's send buffer fills)."""
        if self.transport is not None:
            self.transport.pause_reading()

    def abort(self) -> None:
        """Drop the connection at once."""
        if self.transport is not None:
            self.transport.abort()

    async def recv(self) -> dict[str, Any]:
        """The next queued message (while no handler is set)."""
        data: dict[str, Any] = json.loads(await self.inbox.get())
        return data


def loopback(n: int, per_address: int = 20) -> str:
    """The source address of the `n`-th client of a benchmark: 127.x.y.1, `per_address` clients on each, each
    address in a /24 of its own.

    The server caps connections per address and per /24, and open matches per address (20), so a
    benchmark of many clients spreads them over loopback addresses (all of 127.0.0.0/8 reaches a
    server on 127.0.0.1 on Linux); 20 clients to an address open at most 10 matches at once.
    """
    k = n // per_address
    return f"127.{1 + k // 250}.{k % 250}.1"


async def spawn_server(db: Path, *flags: str, python_flags: Sequence[str] = (),
                       stderr: IO[Any] | None = None, root: Path = ROOT) -> tuple[asyncio.subprocess.Process, str]:
    """Start `kalah serve --port 0 --db DB FLAGS` in a child process, from the source tree `root` (another
    revision's, to compare); the process and the URL it listens on."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *python_flags, "-m", "cli.main", "serve", "--port", "0", "--db", str(db), *flags,
        cwd=root, stdout=asyncio.subprocess.PIPE, stderr=stderr)
    assert proc.stdout is not None
    line = (await proc.stdout.readline()).decode()
    found = re.search(r"ws://\S+", line)
    if not found:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        raise RuntimeError(f"kalah serve did not start: {line!r}")
    return proc, found[0]


def health(url: str) -> dict[str, Any]:
    """The server's /health figures (`url` is its ws:// URL)."""
    with urllib.request.urlopen(url.replace("ws://", "http://") + "/health", timeout=10) as response:
        data: dict[str, Any] = json.loads(response.read())
    return data


def proc_usage(pid: int) -> tuple[float, int]:
    """CPU seconds used by a process and its peak resident memory in bytes (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
    return cpu, _status_kib(pid, "VmHWM:") * 1024


def rss(pid: int) -> int:
    """A process's resident memory now, in bytes (from /proc)."""
    return _status_kib(pid, "VmRSS:") * 1024


def _status_kib(pid: int, key: str) -> int:
    """One kB figure of /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key):
            return int(line.split()[1])
    return 0


class FrozenHeap:
    """This process's collector tuned as `kalah serve` tunes its own, while a benchmark's clients measure latency:
    the objects frozen out of its sight every second and young collections every 10,000 allocations, so that no
    collection of the clients' own objects counts as the server's latency (`stop` to undo)."""

    def __init__(self) -> None:
        gc.collect()
        self.thresholds = gc.get_threshold()
        self.task = asyncio.create_task(keep_heap_frozen(1.0, collect_every_s=float("inf")))

    def stop(self) -> None:
        """Stop freezing; what was frozen is the collector's again (garbage now, for a later run's clients)."""
        self.task.cancel()
        gc.unfreeze()
        gc.set_threshold(*self.thresholds)


def quantile(values: Sequence[float], p: float) -> float:
    """The value at quantile `p` of sorted `values` (nan if empty)."""
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def binomial(n: int, k: int, p: float) -> float:
    """P(exactly k of n draws hit) with chance `p` each, in logarithms (the binomial coefficient of a thousand
    draws overflows a float)."""
    if p in (0.0, 1.0):
        return float(k == (n if p == 1.0 else 0))
    log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log + k * math.log(p) + (n - k) * math.log1p(-p))


def quantile_range(values: Sequence[float], p: float, confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free `confidence` range of quantile `p` from sorted `values`: the order statistics the
    quantile lies between with at least that probability (binomial); `inf` above when the sample cannot bound it
    (the p99 of fewer than about 300 values), `nan` when empty."""
    n = len(values)
    if not n:
        return float("nan"), float("nan")
    cdf, below = [], 0.0  # cdf[k] = P(fewer than k+1 of the n values lie below the quantile)
    for k in range(n + 1):
        below += binomial(n, k, p)
        cdf.append(below)
    tail = (1 - confidence) / 2
    lo = max((k for k in range(n) if cdf[k] <= tail), default=-1)  # values[lo] lies below with P >= 1 - tail
    hi = min((k for k in range(n) if cdf[k] >= 1 - tail), default=n)  # values[hi] lies above with P >= 1 - tail
    return (values[lo] if lo >= 0 else float("-inf")), (values[hi] if hi < n else float("inf"))
