"""Connection admission: who gets a connection, and how fast a connection is served.

The per-address and per-prefix connection caps and the server-wide one (at which the most
crowded network's cheapest connection is shed for a newcomer from elsewhere), the message
budgets of a connection and of its address, and the overload lane: while the event loop runs
late, connections without a seat in an unfinished match are slowed so seated players keep
their service.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterable
from functools import partial
from http import HTTPStatus
from weakref import WeakValueDictionary

from websockets.asyncio.server import ServerConnection
from websockets.http11 import Response

from server.core.arena import Arena
from server.core.errors import RateLimitedError
from server.core.networks import address_of, prefix_of
from server.core.rates import NetworkLimiter, RateLimiter, SharedLimiter
from server.edge.connection import client_of
from server.edge.gate import SeatlessGate
from server.edge.handshakes import Handshakes
from server.edge.options import ServerOptions
from server.edge.peers import PeerTable
from server.edge.session import Peer, Session
from server.logs import event as log_event

EXHIBITIONS = "exhibitions"
"""The seatless gate's queue of exhibitions' bot moves (they take one turn together, like one network)."""
RETRY_AFTER_S = 5
"""A refused handshake's `Retry-After`: connections free up as clients leave or are shed."""


def host_of(conn: ServerConnection) -> str:
    """The network address of a connection's client, as budgets count it (an IPv6 address by its /64; behind a
    trusted proxy, the forwarded address)."""
    return address_of(client_of(conn))


def refusal(conn: ServerConnection, status: HTTPStatus, reason: str, retry_s: int = RETRY_AFTER_S) -> Response:
    """A refused handshake: the status, one line saying why, and `Retry-After` (seconds) saying when to try again."""
    response = conn.respond(status, f"{reason}; retry in {retry_s} s\n")
    response.headers["Retry-After"] = str(retry_s)
    return response


def seated(arena: Arena, session: Session) -> bool:
    """Whether a connection's identity holds a seat in an unfinished match (its connection is never shed)."""
    pid = session.player_id
    return pid is not None and any(room.match.status != "finished" for room in arena.rooms_of(pid))


class Admission:
    """The server's connections by address and prefix, their budgets, and whether the server is overloaded."""

    def __init__(self, arena: Arena, opts: ServerOptions, handshakes: Handshakes | None = None) -> None:
        self.arena = arena
        self.opts = opts
        self.handshakes = handshakes or Handshakes(opts.max_handshakes_per_address, opts.max_handshakes_per_prefix,
                                                   opts.max_handshakes)
        """Connections whose HTTP request has not arrived yet (counted before any cap below sees them)."""
        self.connections = 0
        self.peers = PeerTable(self.new_peer)
        self.all_reads = RateLimiter(opts.all_read_rows_rate, int(2 * opts.all_read_rows_rate))
        """Rows of public reads the whole server serves (each address's bucket also draws on it)."""
        self.network_reads: WeakValueDictionary[str, NetworkLimiter] = WeakValueDictionary()
        """Network prefix -> rows of public reads its addresses may fetch together (drawing on `all_reads`); a
        network's bucket lives as long as a known address of it holds it."""
        self.evicting = 0
        """Connections being closed to make room for a newcomer (still counted until they are gone)."""
        self.busy_until = 0.0
        """Loop time until which the server counts as overloaded (the loop fell behind lately)."""
        self.pressed_until = 0.0
        """Loop time until which connections without a seat wait at the gate (the loop fell behind lately)."""
        self.gate = SeatlessGate(busy=opts.seatless_busy)
        """Where messages of connections without a seat wait their turn while the loop runs late."""
        self.paused = 0
        """Times a connection's reading waited out a retry hint it kept ignoring."""
        self.anonymous: dict[str, set[Session]] = {}
        """Network prefix -> its connections that have not said hello yet."""
        self.anonymous_count = 0
        self.anonymous_evicting = 0
        """Connections without hello being closed to make room for a newcomer."""

    def refuse(self, conn: ServerConnection) -> Response | None:
        """The HTTP refusal of a new connection past a connection cap (429, 503), or None to let it in."""
        host = host_of(conn)
        metrics = self.arena.metrics
        peer = self.peers.known(host)
        if peer is not None and (wait := peer.cooling_until - time.monotonic()) > 0:
            log_event("connection_refused", remote=host, reason="cooling")
            metrics.refused("http_429")
            return refusal(conn, HTTPStatus.TOO_MANY_REQUESTS, "a connection from your address was closed for "
                           "flooding: slow down", math.ceil(wait))
        if peer is not None and peer.connections >= self.opts.max_per_address:
            log_event("connection_refused", remote=host, reason="per_address")
            metrics.refused("http_429")
            return refusal(conn, HTTPStatus.TOO_MANY_REQUESTS, "too many connections from your address")
        if self.peers.connections_of_prefix(host) >= self.opts.max_per_prefix:
            log_event("connection_refused", remote=host, reason="per_prefix")
            metrics.refused("http_429")
            return refusal(conn, HTTPStatus.TOO_MANY_REQUESTS, "too many connections from your network")
        if self.connections - self.evicting >= self.opts.max_connections and not self.make_room(host):
            log_event("connection_refused", connections=self.connections)
            metrics.refused("http_503")
            return refusal(conn, HTTPStatus.SERVICE_UNAVAILABLE, "server busy: too many connections")
        if self.anonymous_count - self.anonymous_evicting >= self.opts.max_anonymous \
                and not self.make_anonymous_room(host):
            log_event("connection_refused", reason="anonymous", anonymous=self.anonymous_count)
            metrics.refused("http_503")
            return refusal(conn, HTTPStatus.SERVICE_UNAVAILABLE, "server busy: too many connections that have not said "
                           "hello")
        return None

    def make_room(self, host: str) -> bool:
        """At the connection limit: close the cheapest connection of the network holding the most, if that is
        not `host`'s own (never one seated in an unfinished match); whether a slot is being freed."""
        prefix, most = self.peers.crowded()
        if most <= self.peers.connections_of_prefix(host) + 1:
            return False  # the newcomer's network would hold as many: nothing fairer to do than refuse
        arena = self.arena
        candidates = [(seated(arena, s), s.player_id is not None, s.opened, id(s), s)
                      for peer in self.peers.of_prefix(prefix) for s in peer.sessions if not s.evicted]
        if not candidates:
            return False
        is_seated, _, _, _, victim = min(candidates)
        if is_seated:
            return False
        self.shed(victim, prefix, most)
        return True

    def make_anonymous_room(self, host: str) -> bool:
        """At the limit of connections without hello: close the oldest such connection of the network holding
        the most of them, if that is not `host`'s own; whether a slot is being freed."""
        waiting = self.anonymous
        prefix = max(waiting, key=lambda p: len(waiting[p]), default="")
        most = len(waiting.get(prefix, ()))
        if most <= len(waiting.get(prefix_of(host), ())) + 1:
            return False
        candidates = [(s.opened, id(s), s) for s in waiting[prefix] if not s.evicted]
        if not candidates:
            return False
        self.shed(min(candidates)[2], prefix, most)
        return True

    def shed(self, victim: Session, prefix: str, held: int) -> None:
        """Close `victim` (1013, try again later) to make room for a newcomer from another network."""
        victim.evicted = True
        self.evicting += 1
        self.anonymous_evicting += victim.player_id is None
        log_event("connection_shed", remote=victim.remote, player=victim.player_id, prefix=prefix, held=held)
        self.arena.metrics.refused("connection_shed")
        self.arena.spawn(victim.ws.close(1013, "server full: your network holds the most connections; retry later"))

    async def pause_if_ignored(self, in_a_row: int, retry_ms: int | None) -> int:
        """After a load refusal, the `in_a_row`-th in a row: past `refusal_pause_after`, wait out its retry hint (at
        most 1 s) before the connection's next message is read. Returns `in_a_row`."""
        if in_a_row > self.opts.refusal_pause_after:
            self.paused += 1
            await asyncio.sleep(min(1.0, (retry_ms or 1000) / 1000))
        return in_a_row

    def close_flooding(self, session: Session, reason: str) -> asyncio.Task[None]:
        """Close a connection that kept sending past its refusals (1008); its address may not connect again for
        `flood_cooling_s`."""
        log_event("rate_limit_close", remote=session.remote, player=session.player_id)
        session.peer.cooling_until = time.monotonic() + self.opts.flood_cooling_s
        return asyncio.create_task(session.ws.close(1008, reason))

    def new_peer(self, host: str) -> Peer:
        """The state of an address seen for the first time (or again after its budgets refilled)."""
        network = prefix_of(host)
        shared = self.network_reads.get(network)
        if shared is None:
            rate = self.opts.network_read_rows_rate
            shared = self.network_reads[network] = NetworkLimiter(rate, int(2 * rate), self.all_reads)
        reads = SharedLimiter(self.opts.read_rows_rate, self.opts.read_rows_burst, shared)
        messages = RateLimiter(self.opts.address_rate, self.opts.address_burst)
        return Peer(host, reads, messages, network=network)

    def admit(self, ws: ServerConnection) -> Session:
        """A connection let in: its session, counted under its address and prefix."""
        self.connections += 1
        peer = self.peers.acquire(host_of(ws))
        session = Session(ws, RateLimiter(self.opts.rate, self.opts.burst), peer, self.opts.send_buffer,
                          self.opts.seatless_send_buffer, partial(seated, self.arena))
        peer.sessions.add(session)
        self.anonymous.setdefault(prefix_of(peer.address), set()).add(session)
        self.anonymous_count += 1
        return session

    def greeted(self, session: Session) -> None:
        """A connection said hello (or closed): it no longer counts among those without hello."""
        prefix = prefix_of(session.peer.address)
        waiting = self.anonymous.get(prefix)
        if waiting is None or session not in waiting:
            return
        waiting.discard(session)
        if not waiting:
            del self.anonymous[prefix]
        self.anonymous_count -= 1
        self.anonymous_evicting -= session.evicted

    def release(self, session: Session) -> None:
        """A connection closed: uncount it."""
        self.connections -= 1
        self.evicting -= session.evicted
        self.greeted(session)
        session.peer.sessions.discard(session)
        self.peers.release(session.peer)

    async def watch_lag(self, step: float = 0.05) -> None:
        """Mark the server overloaded while its event loop runs callbacks late by more than `overload_lag_s`."""
        loop = asyncio.get_running_loop()
        late = 0
        while True:
            start = loop.time()
            await asyncio.sleep(step)
            now = loop.time()
            lag = now - start - step
            self.arena.metrics.loop_lag_seconds.observe(max(0.0, lag))
            if lag > self.opts.seatless_lag_s:
                if not self.pressed():
                    log_event("seatless_gated", lag_ms=round(1000 * lag), connections=self.connections)
                self.pressed_until = now + self.opts.seatless_hold_s
            late = late + 1 if lag > self.opts.overload_lag_s else 0
            if late >= 3:
                if now >= self.busy_until:
                    log_event("overloaded", lag_ms=round(1000 * (now - start - step)), connections=self.connections)
                self.busy_until = now + self.opts.overload_hold_s

    def overloaded(self) -> bool:
        """Whether the event loop fell behind lately (then players seated in a game are served first)."""
        return bool(self.busy_until) and asyncio.get_running_loop().time() < self.busy_until

    def pressed(self) -> bool:
        """Whether connections without a seat wait at the gate: the loop fell behind lately, or some still wait."""
        return self.gate.waiting > 0 or asyncio.get_running_loop().time() < self.pressed_until

    async def turn(self, session: Session) -> None:
        """Before a connection's next message is read: while the loop runs late, one without a seat in an unfinished
        match waits for its network's turn at the gate (a seated player's message is served at once)."""
        if (self.gate.waiting or self.pressed_until) and self.pressed() and not seated(self.arena, session):
            await self.gate.wait(session.peer.network, session.ws.connection_lost_waiter)

    def sessions_from(self, address: str) -> Iterable[Session]:
        """The open connections from an address, hello said or not."""
        peer = self.peers.get(address)
        return peer.sessions if peer is not None else ()

    async def exhibition_turn(self) -> None:
        """Before an untimed exhibition's bot move: while the loop runs late, wait at the gate in the exhibitions'
        own turn (all of them one, as one network)."""
        if (self.gate.waiting or self.pressed_until) and self.pressed():
            await self.gate.wait(EXHIBITIONS)

    def over_rate(self, session: Session) -> RateLimitedError | None:
        """None if the connection's and its address's message budgets allow one more message (and, while the
        server is overloaded, its slow lanes unless it holds a seat in an unfinished match), else the refusal."""
        if self.overloaded() and not seated(self.arena, session):
            opts = self.opts
            lane = session.lane
            if lane is None:
                lane = session.lane = RateLimiter(opts.overload_rate, 10)
            peer = session.peer
            if peer.lane is None:
                peer.lane = RateLimiter(opts.overload_address_rate, int(2 * opts.overload_address_rate))
            for bucket in (lane, peer.lane):
                if not bucket.allow():
                    session.limiter.refused += 1
                    return RateLimitedError("the server is overloaded: players in a game are served first; ask "
                                            "again shortly", max(opts.overload_hold_s, bucket.wait_s()))
        if not session.limiter.allow():
            return RateLimitedError("too many messages on this connection: slow down",
                                    session.limiter.wait_s())
        if not session.peer.messages.allow():  # the address's budget, shared by its connections (and kept)
            session.limiter.refused += 1
            return RateLimitedError("too many messages from your address: slow down", session.peer.messages.wait_s())
        return None
