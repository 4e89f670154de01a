"""The server factory: websockets on one port (plus `/health` and the spectator page over plain HTTP), storage, arena.

`start_server(db_path, host, port=0, **options)` returns a `RunningServer` whose `close()`
shuts down gracefully: refuse new changes, finish the writes in flight, close every
connection with 1001 (going away), close the database.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from dataclasses import fields
from http import HTTPStatus
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol.errors import BadFieldError, KalahError
from protocol.messages import ErrorMessage, Message, decode_client
from server.core.arena import Arena
from server.core.arena_options import ArenaOptions
from server.core.errors import InternalError
from server.core.hosted import BotRunner
from server.core.match_host import MatchHost
from server.core.replication import Deployment, single_node
from server.core.resume import load
from server.core.tournament_driver import EventDriver
from server.edge.connection import connection_class
from server.edge.gc_tuning import watch_collections
from server.edge.options import ServerOptions
from server.edge.session import Session
from server.front.admission import Admission, host_of
from server.front.metrics import Metrics
from server.front.metrics import respond as metrics_page
from server.front.moderation import refuse_banned
from server.front.outside_engines.gateway import Gateway, GatewayOptions
from server.front.outside_engines.ws_link import is_kgp, serve_kgp
from server.front.router import Router
from server.front.tournament_requests import EventRequests
from server.front.web import ClaimLimits
from server.front.web import respond as web_page
from server.logs import event as log_event
from server.storage import StorageError, is_database_failure, open_storage
from server.storage.writer import unavailable

STORE_HEADER = "Kalah-Store"
"""The handshake header that names the server's database (its random identity, the same on every node)."""


class RunningServer:
    """A started server: where it listens, and how to stop it."""

    def __init__(self, server: Server, arena: Arena, router: Router, handler: _Handler, host: str, port: int) -> None:
        self.server = server
        self.handler = handler
        self.arena = arena
        self.router = router
        self.host = host
        self.port = port
        self.kgp: Gateway | None = None
        """The KGP gateway for outside engines, when started with `kgp_port`."""
        self.events: EventDriver | None = None
        """The events this server runs and holds (set once they are loaded)."""
        self._closed = False
        self.unwatch_collections: Callable[[], None] = lambda: None
        """Stops timing the process's garbage collections for /metrics."""

    @property
    def admission(self) -> Admission:
        """Its connections by address, their budgets, whether it is overloaded."""
        return self.handler.admission

    @property
    def url(self) -> str:
        """The websocket URL, `ws://host:port`."""
        return f"ws://{self.host}:{self.port}"

    async def close(self) -> None:
        """Stop accepting, finish writes in flight, close connections (1001), close the database."""
        if self._closed:
            return
        self._closed = True
        if self.handler.lag_task is not None:
            self.handler.lag_task.cancel()
        self.handler.admission.gate.close()
        self.unwatch_collections()
        log_event("shutdown_started", matches=len(self.arena.rooms))
        self.server.server.close()  # stop accepting; connections stay open while writes finish
        if self.kgp is not None:
            await self.kgp.close()
        await self.arena.drain()
        self.server.close(close_connections=True)
        await self.server.wait_closed()
        await self.router.moderation.close()
        await self.arena.replication.close()
        await self.arena.storage.close()
        self.arena.bots.close()
        self.router.analyst.close()
        log_event("shutdown_done")

    async def __aenter__(self) -> RunningServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _split_options(options: dict[str, Any]) -> tuple[ServerOptions, ArenaOptions]:
    """Sort keyword options into the server's and the arena's; refuse unknown ones."""
    known_server = {f.name for f in fields(ServerOptions)}
    known_arena = {f.name for f in fields(ArenaOptions)}
    unknown = set(options) - known_server - known_arena
    if unknown:
        raise TypeError(f"unknown server options: {', '.join(sorted(unknown))}")
    return (ServerOptions(**{k: v for k, v in options.items() if k in known_server}),
            ArenaOptions(**{k: v for k, v in options.items() if k in known_arena}))


def _error(exc: KalahError, request: str | None, match_id: str | None) -> ErrorMessage:
    """The wire form of a refusal."""
    return ErrorMessage(code=exc.code, message=str(exc)[:1000], request=request, match_id=match_id,
                        retry_ms=exc.retry_ms)


def _refused(exc: KalahError, data: str | bytes) -> ErrorMessage:
    """The refusal of a message not served (over a rate, or with a bad field), naming its type and match as far as
    they can be read."""
    try:
        raw = json.loads(data)
        request, match_id = raw.get("type"), raw.get("match_id")
        return _error(exc, request if isinstance(request, str) else None,
                      match_id if isinstance(match_id, str) else None)
    except (ValueError, AttributeError):  # not JSON, not an object, or a type or match id the wire refuses
        return _error(exc, None, None)


class _Handler:
    """The per-connection loop and the HTTP side of the port."""

    def __init__(self, router: Router, opts: ServerOptions, store: str, metrics: Metrics) -> None:
        self.router = router
        self.metrics = metrics
        """The server's registry, exported at `/metrics`."""
        self.opts = opts
        self.store = store
        """The database's identity, announced in every handshake's `Kalah-Store` header."""
        self.admission = Admission(router.arena, opts)
        self.lag_task: asyncio.Task[None] | None = None
        """The task that watches the event loop's lag (set once started)."""
        self.kgp: Gateway | None = None
        """The KGP gateway, which also serves agents at `/kgp` (set once started)."""

    def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        """Answer `/health` and the spectator page over plain HTTP; refuse new connections beyond the limit (503)."""
        arena = self.router.arena
        if request.path.split("?")[0] == "/metrics":
            return metrics_page(conn, request, arena, self.metrics)
        if request.path.split("?")[0] == "/health":
            status = HTTPStatus.SERVICE_UNAVAILABLE if arena.closing else HTTPStatus.OK
            body: dict[str, object] = {"status": "closing" if arena.closing else "ok",
                    "connections": self.admission.connections,
                    "matches": len(arena.rooms), "actions": arena.actions, "quarantined": arena.quarantined,
                    "commits": arena.storage.commits,
                    "seatless_waiting": self.admission.gate.waiting, "seatless_held": self.admission.gate.held,
                    "analyses_paced": self.router.analyst.paced,
                    "analysis_share": round(self.router.analyst.share(), 3),
                    "commit_seconds": round(arena.storage.commit_seconds, 3),
                    "role": arena.replication.role, **arena.replication.health()}
            response = conn.respond(status, json.dumps(body) + "\n")
            response.headers["Content-Type"] = "application/json"
            return response
        claims = ClaimLimits(arena.options.grace_s, arena.options.idle_s)  # the play page offers claims by them
        if (page := web_page(request, claims)) is not None:  # pages and static files: any request but a websocket's
            return page
        if arena.closing:
            return conn.respond(HTTPStatus.SERVICE_UNAVAILABLE, "server stopping\n")
        return self.admission.refuse(conn)

    def process_response(self, conn: ServerConnection, request: Request, response: Response) -> None:
        """Name the database in the handshake, so a client finds the token this database gave it before hello."""
        response.headers[STORE_HEADER] = self.store

    async def hello_deadline(self, session: Session) -> None:
        """Close a connection that has not said hello within the hello timeout (1008)."""
        await asyncio.sleep(self.opts.hello_timeout)
        if session.player_id is None:
            log_event("hello_timeout", remote=session.remote)
            self.router.arena.metrics.refused("hello_timeout")
            await session.ws.close(1008, "say hello first")

    async def __call__(self, ws: ServerConnection) -> None:
        """Serve one connection until it closes (a KGP agent's at `/kgp`: the gateway's, under its limits)."""
        if is_kgp(ws):
            await serve_kgp(self.kgp, ws)
            return
        if self.router.moderation.address_banned(host_of(ws)):
            self.router.arena.metrics.refused("banned")
            await refuse_banned(ws)
            return
        admission = self.admission
        session = admission.admit(ws)
        sock = ws.transport.get_extra_info("socket") if ws.transport is not None else None
        if sock is not None and self.opts.socket_send_buffer:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.opts.socket_send_buffer)
        deadline = asyncio.create_task(self.hello_deadline(session))
        try:
            closing: asyncio.Task[None] | None = None
            greeted = False
            in_a_row = 0  # load refusals in a row (rate_limited, too_many): past refusal_pause_after, waited out
            async for data in ws:
                if closing is not None:
                    continue  # keep reading (and dropping) so the closing handshake gets through
                await admission.turn(session)  # seated players first while the loop runs late
                refusal = admission.over_rate(session)
                if refusal is not None:
                    self.router.arena.metrics.refused(refusal.code)
                    if session.limiter.refused >= self.opts.max_refused:
                        closing = admission.close_flooding(session, "rate limit exceeded")
                        continue
                    session.send(_refused(refusal, data))
                    in_a_row = await admission.pause_if_ignored(in_a_row + 1, refusal.retry_ms)
                    continue
                replies = await self.serve_one(session, data)
                if not greeted and session.player_id is not None:
                    greeted = True
                    admission.greeted(session)
                load_refused, hint = False, None
                for reply in replies:
                    session.send(reply)
                    if isinstance(reply, ErrorMessage) and reply.code in ("too_many", "rate_limited"):
                        load_refused, hint = True, reply.retry_ms
                        if reply.code == "too_many":
                            session.limiter.refused += 1  # asking again at once, past its hint, is flooding too
                if session.limiter.refused >= self.opts.max_refused:
                    closing = admission.close_flooding(session, "too many refused requests")
                elif load_refused:
                    in_a_row = await admission.pause_if_ignored(in_a_row + 1, hint)
                else:
                    in_a_row = 0
        except ConnectionClosed:
            pass
        finally:
            deadline.cancel()
            admission.release(session)
            await self.router.disconnect(session)

    async def serve_one(self, session: Session, data: str | bytes) -> list[Message]:
        """Decode and serve one message; any refusal becomes an error message."""
        request = match_id = None
        try:
            msg = decode_client(data)
            request, match_id = msg.type, getattr(msg, "match_id", None)
            return await self.router.handle(session, msg)
        except KalahError as exc:
            self.router.arena.metrics.refused(exc.code)
            if isinstance(exc, BadFieldError) and request is None:  # a known request with a bad field: name it
                return [_refused(exc, data)]
            return [_error(exc, request, match_id)]
        except Exception as exc:
            if is_database_failure(exc):  # a read the database could not answer (down, unreachable, disk)
                log_event("storage_unavailable", request=request, error=repr(exc), level=40)
                return [_error(unavailable(exc), request, match_id)]
            log_event("internal_error", request=request, error=repr(exc), level=40, exc_info=True)
            return [_error(InternalError("the server failed to serve this request"), request, match_id)]


def _deployment(bus: str | None, node_id: str | None) -> Callable[[MatchHost], Deployment]:
    """How the arena is deployed: on its own, or as one node of a cluster on the bus `bus` (redis-py is
    imported only by a server that has one)."""
    if bus is None:
        return single_node
    try:
        from server.cluster import ClusterOptions, cluster_node
    except ImportError:
        raise StorageError("several nodes need redis-py: pip install 'kalah-arena[cluster]'") from None
    from server.cluster.bus import describe_bus

    options = ClusterOptions(bus) if node_id is None else ClusterOptions(bus, node_id)

    def deploy(arena: MatchHost) -> Deployment:
        """This server's part in the cluster."""
        try:
            return cluster_node(arena, options)
        except ValueError as exc:  # a URL redis-py cannot read
            raise StorageError(f"bus {describe_bus(bus)}: {exc}") from None

    return deploy


async def start_server(db_path: str | Path, host: str = "127.0.0.1", port: int = 0,
                       **options: Any) -> RunningServer:
    """Open the database, resume unfinished matches, and listen on `host:port` (0: any free port)."""
    kgp_opts, options = GatewayOptions.split(options)
    server_opts, arena_opts = _split_options(options)
    storage = await open_storage(db_path, server_opts.synchronous, shared=server_opts.bus is not None)
    bots = BotRunner(server_opts.bot_factory, server_opts.bot_workers, reserved=server_opts.bot_reserved,
                     max_queued=server_opts.bot_max_queued, engine_bytes=server_opts.engine_bytes,
                     table_bytes=server_opts.table_bytes)
    try:
        arena = Arena(storage, bots, arena_opts, _deployment(server_opts.bus, server_opts.node_id))
        await load(arena)
        router = Router(arena)
        events = EventDriver(arena)
        event_requests = EventRequests(events)
        router.handlers.update(event_requests.handlers())
        await events.load()
        handler = _Handler(router, server_opts, await storage.store_id(), Metrics(arena.metrics))
        router.busy = handler.admission.overloaded  # public reads are shared while the loop falls behind
        analyst = router.analyst
        analyst.busy, analyst.player_busy = server_opts.analysis_busy, server_opts.analysis_player_busy
        analyst.pressure = lambda: handler.admission.pressed() or bots.thinking_for_people > 0
        arena.bot_turns.wait_turn = handler.admission.exhibition_turn  # exhibitions after seated players too
        router.answers.max_age = server_opts.shared_reads_s
        handler.metrics.watch(arena, router.analyst, lambda: handler.admission.connections)
        peers = handler.admission.peers
        router.moderation.sessions_from = lambda address: peer.sessions if (peer := peers.get(address)) else ()
        await router.moderation.refresh()
        server = await serve(handler, host, port, process_request=handler.process_request,
                             process_response=handler.process_response,
                             max_size=server_opts.max_message_bytes, ping_interval=server_opts.ping_interval,
                             ping_timeout=server_opts.ping_timeout, max_queue=16, compression=None,
                             backlog=server_opts.backlog,
                             create_connection=connection_class(asyncio.get_running_loop(), server_opts.max_unread))
    except BaseException:  # e.g. the port is taken: the database thread must not keep the process alive
        await storage.close()
        raise
    router.moderation.start()
    sock = next(iter(server.sockets))
    bound_host, bound_port = sock.getsockname()[:2]
    try:
        await arena.replication.start(f"{bound_host}:{bound_port}")
    except BaseException:
        server.close()
        await arena.replication.close()
        await storage.close()
        raise
    log_event("listening", host=bound_host, port=bound_port, db=storage.where, matches=len(arena.rooms))
    shown_host = host if host not in ("", "0.0.0.0") else bound_host
    handler.lag_task = asyncio.create_task(handler.admission.watch_lag(), name="loop-lag")
    running = RunningServer(server, arena, router, handler, shown_host, bound_port)
    running.unwatch_collections = watch_collections(arena.metrics.collection)
    running.events = events
    if kgp_opts.kgp_port is not None:
        try:
            running.kgp = handler.kgp = await Gateway.start(arena, kgp_opts, host)
            running.kgp.banned = router.moderation.address_banned
            running.kgp.player_banned = router.moderation.player_banned
            router.moderation.on_bans = running.kgp.close_banned
            running.kgp.join_events(event_requests)
        except BaseException:
            await running.close()
            raise
    return running


async def serve_forever(running: RunningServer, stop: asyncio.Event) -> None:
    """Serve until `stop` is set (by SIGTERM or SIGINT), then shut down gracefully."""
    await stop.wait()
    await running.close()
