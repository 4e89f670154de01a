"""The server factory: websockets on one port (plus `/health` and the spectator page over plain HTTP), storage, arena.

`start_server(db_path, host, port=0, **options)` returns a `RunningServer` whose `close()`
shuts down gracefully: refuse new changes, finish the writes in flight, close every
connection with 1001 (going away), close the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, serve

from server.core.arena import Arena
from server.core.arena_options import ArenaOptions
from server.core.hosted import BotRunner
from server.core.match_host import MatchHost
from server.core.played import PlayedHere
from server.core.replication import Deployment, single_node
from server.core.resume import load
from server.core.tournament_driver import TournamentDriver
from server.edge.answers import Answers
from server.edge.client_address import TrustedProxies
from server.edge.connection import connection_class
from server.edge.gc_tuning import watch_collections
from server.edge.handshakes import Handshakes
from server.edge.options import ServerOptions
from server.edge.tls import tls_context
from server.front.admission import Admission
from server.front.analysis import Analyst
from server.front.explore import Explorer
from server.front.guard_sweep import GuardSweep
from server.front.handler import ConnectionHandler
from server.front.metrics import Metrics
from server.front.moderation import Moderator
from server.front.operator_auth import OperatorAuth
from server.front.outside_engines.gateway import Gateway, GatewayOptions
from server.front.puzzles import Puzzles
from server.front.reviews import Reviews
from server.front.router import Router
from server.front.tournament_requests import TournamentRequests
from server.logs import event as log_event
from server.storage import StorageError, open_storage


class RunningServer:
    """A started server: where it listens, and how to stop it."""

    def __init__(self, server: Server, arena: Arena, router: Router, handler: ConnectionHandler, host: str, port: int,
                 tournaments: TournamentDriver, lag_task: asyncio.Task[None], unwatch_collections: Callable[[], None],
                 reviews: Reviews, sweep: GuardSweep, kgp: Gateway | None = None, secure: bool = False) -> None:
        self.server = server
        self.handler = handler
        self.arena = arena
        self.router = router
        self.host = host
        self.port = port
        self.secure = secure
        """Whether the port speaks TLS (https and wss)."""
        self.kgp = kgp
        """The KGP gateway for outside engines, when started with `kgp_port`."""
        self.tournaments = tournaments
        """The tournaments this server runs and holds."""
        self.reviews = reviews
        """The game reviews it serves and makes."""
        self.sweep = sweep
        """The sweep of lapsed claims in `guards`."""
        self.lag_task = lag_task
        """The task that watches the event loop's lag."""
        self.unwatch_collections = unwatch_collections
        """Stops timing the process's garbage collections for /metrics."""
        self._closed = False

    @property
    def admission(self) -> Admission:
        """Its connections by address, their budgets, whether it is overloaded."""
        return self.handler.admission

    def pressed(self) -> bool:
        """Whether it serves under pressure: the seatless gate in force (its loop fell behind lately), or a hosted bot
        thinking for a person (then analyses rest between runs and full collections wait)."""
        return self.handler.admission.pressed() or self.arena.bots.thinking_for_people > 0

    @property
    def url(self) -> str:
        """The websocket URL, `ws://host:port` (`wss://` with TLS)."""
        return f"{'wss' if self.secure else 'ws'}://{self.host}:{self.port}"

    @property
    def web_url(self) -> str:
        """The web page's URL, `http://host:port/` (`https://` with TLS)."""
        return f"{'https' if self.secure else 'http'}://{self.host}:{self.port}/"

    async def close(self) -> None:
        """Stop accepting, finish writes in flight, close connections (1001), close the database."""
        if self._closed:
            return
        self._closed = True
        self.lag_task.cancel()
        await self.reviews.close()
        await self.sweep.close()
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
    proxies = TrustedProxies.parse(server_opts.trusted_proxies)
    tls = tls_context(server_opts.tls_cert, server_opts.tls_key)
    storage = await open_storage(db_path, server_opts.synchronous, shared=server_opts.bus is not None)
    bots = BotRunner(server_opts.bot_factory, server_opts.bot_workers, reserved=server_opts.bot_reserved,
                     max_queued=server_opts.bot_max_queued, engine_bytes=server_opts.engine_bytes,
                     table_bytes=server_opts.table_bytes)
    gateway: Gateway | None = None
    """The KGP gateway, started last (once the server listens and its node is registered), if asked for."""
    try:
        arena = Arena(storage, bots, arena_opts, _deployment(server_opts.bus, server_opts.node_id),
                      wait_turn=lambda: admission.exhibition_turn())  # exhibitions after seated players too
        admission = Admission(arena, server_opts, Handshakes(
            server_opts.max_handshakes_per_address, server_opts.max_handshakes_per_prefix, server_opts.max_handshakes,
            proxies))
        await load(arena)
        tournaments = TournamentDriver(arena)
        tournament_requests = TournamentRequests(tournaments, hidden=lambda event_id: event_id in moderation.events)
        analyst = Analyst(busy=server_opts.analysis_busy, player_busy=server_opts.analysis_player_busy,
                          pressure=lambda: admission.pressed() or bots.thinking_for_people > 0)
        moderation = Moderator(arena, operator=OperatorAuth(arena.is_operator),
                               sessions_from=lambda address: admission.sessions_from(address),
                               on_bans=lambda: None if gateway is None else gateway.close_banned(),
                               cancel_event=tournament_requests.cancel_any)
        played = PlayedHere(arena)
        reviews = Reviews(analyst, storage, arena.write, played, server_opts.review_every_s,
                          lease_s=server_opts.review_lease_s, redos=server_opts.review_redos)
        answers = Answers(max_age=server_opts.shared_reads_s)
        explorer = Explorer(arena, analyst, answers, played, busy=admission.overloaded)
        router = Router(arena, analyst, moderation, answers,
                        busy=admission.overloaded,  # public reads are shared while the loop falls behind
                        more_handlers={**tournament_requests.handlers(), **reviews.handlers(),
                                       **explorer.handlers(), **Puzzles(storage, arena.write).handlers()},
                        played=played)
        await tournaments.load()
        metrics = Metrics(arena.metrics)
        metrics.watch(arena, analyst, lambda: admission.connections)
        handler = ConnectionHandler(router, admission, metrics, server_opts, await storage.store_id(),
                                    kgp=lambda: gateway)
        await moderation.refresh()
        server = await serve(handler, host, port, process_request=handler.process_request,
                             process_response=handler.process_response,
                             max_size=server_opts.max_message_bytes, ping_interval=server_opts.ping_interval,
                             ping_timeout=server_opts.ping_timeout, max_queue=16, compression=None,
                             backlog=server_opts.backlog, ssl=tls,
                             open_timeout=server_opts.handshake_timeout,
                             create_connection=connection_class(asyncio.get_running_loop(), server_opts.max_unread,
                                                                proxies, admission.handshakes))
    except BaseException:  # e.g. the port is taken: the database thread must not keep the process alive
        await storage.close()
        raise
    moderation.start()
    reviews.start()
    sweep = GuardSweep(arena.write, server_opts.guard_sweep_s)
    sweep.start()
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
    lag_task = asyncio.create_task(admission.watch_lag(), name="loop-lag")
    unwatch = watch_collections(arena.metrics.collection)
    if kgp_opts.kgp_port is not None:
        try:
            gateway = await Gateway.start(arena, kgp_opts, host, moderation.address_banned, moderation.player_banned,
                                          tournament_requests)
        except BaseException:
            await RunningServer(server, arena, router, handler, shown_host, bound_port, tournaments, lag_task,
                                unwatch, reviews, sweep).close()
            raise
    return RunningServer(server, arena, router, handler, shown_host, bound_port, tournaments, lag_task, unwatch,
                         reviews, sweep, gateway, secure=tls is not None)


async def serve_forever(running: RunningServer, stop: asyncio.Event) -> None:
    """Serve until `stop` is set (by SIGTERM or SIGINT), then shut down gracefully."""
    await stop.wait()
    await running.close()
