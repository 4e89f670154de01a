"""`kalah serve`: run the game server until SIGTERM or Ctrl-C, then shut down gracefully.

At start it prints where it listens and what its bots have (`bots.inventory`: books, endgame
databases, what `perfect` is with them); started in a terminal, it builds the databases that
take seconds in the background.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import re
import signal
import socket
import sys
from collections.abc import Callable

from bots.inventory import announce
from cli.number_args import number, whole
from cli.operator_token import add_operator_token_args, operator_token
from cli.server_args import CommandError
from server.assembly import serve_forever, start_server
from server.core.passwords import PasswordCost
from server.edge.client_address import proxy_network
from server.edge.gc_tuning import keep_heap_frozen
from server.edge.open_files import files_needed, fit_open_files
from server.edge.options import ServerOptions
from server.edge.stall_watch import watch_stalls
from server.edge.tls import TlsError
from server.front.origins import canonical_origin
from server.front.outside_engines.gateway import GatewayOptions
from server.logs import FORMATS as LOG_FORMATS
from server.logs import EventFormatter
from server.logs import configure as configure_logs
from server.storage import SchemaError, StorageError, default_db_path, describe


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah serve`."""
    parser.add_argument("--config", metavar="FILE", default=None,
                        help="read flags from this TOML file (keys: these flags without their dashes, e.g. "
                             "port = 8765, trusted-proxy = [\"127.0.0.1/32\"]); flags given here win over it")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=port_number, default=8765, help="port to listen on, 0..65535 (0: any free port)")
    parser.add_argument("--db", default=None, metavar="PATH|URL",
                        help="a SQLite file (a path or sqlite:PATH) or a PostgreSQL database "
                             f"(postgresql://user:password@host/db) (default: {default_db_path()})")
    parser.add_argument("--grace", type=number(), default=60.0, metavar="SECONDS",
                        help="how long a disconnected player may be away before the win can be claimed")
    parser.add_argument("--idle-limit", type=number(), default=900.0, metavar="SECONDS",
                        help="in untimed games, how long the side to move may make no move before the other "
                             "side can claim the win (0: never)")
    add_operator_token_args(parser, "the secret that allows rated bot exhibitions, /metrics and moderation")
    parser.add_argument("--max-connections", type=whole(1), default=10_000,
                        help="connections in all; past it the handshake gets HTTP 503")
    parser.add_argument("--allowed-origin", type=origin, action="append", default=[], metavar="ORIGIN",
                        help="a web page's origin (https://host[:port]) on another site that may open websockets "
                             "here, beside the server's own (repeat for more); other origins get HTTP 403")
    parser.add_argument("--max-per-address", type=whole(1), default=64, help="connections one address may hold")
    parser.add_argument("--hello-timeout", type=number(above=True), default=10.0, metavar="SECONDS",
                        help="close connections that have not said hello by then")
    parser.add_argument("--rate", type=number(above=True), default=30.0,
                        help="messages a second one connection may send")
    parser.add_argument("--burst", type=whole(1), default=60, help="messages one connection may send at once")
    parser.add_argument("--synchronous", choices=["FULL", "NORMAL"], default="FULL",
                        help="SQLite synchronous mode (FULL survives power loss, NORMAL only crashes); "
                             "PostgreSQL commits are always durable")
    parser.add_argument("--gc-freeze", type=number(), default=1.0, metavar="SECONDS",
                        help="freeze the surviving objects out of the garbage collector at start and this often, so "
                             "collections stay short (a full collection every 10 to 60 minutes reclaims cycles among "
                             "them; 0: off)")
    parser.add_argument("--stall-trace", type=number(), default=1.0, metavar="SECONDS",
                        help="when the event loop is held this long, take every thread's stack and log it as "
                             "loop_stalled once the loop runs again (0: off)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                        help="the least important log lines written to standard error")
    parser.add_argument("--log-format", default="text", choices=list(LOG_FORMATS),
                        help="log lines as text, or as one JSON object a line for a log tool")
    parser.add_argument("--password-cost", type=password_cost, default=PasswordCost(), metavar="PASSES,KIB,LANES",
                        help="argon2id's parameters for account passwords (default 3,65536,4: RFC 9106's second "
                             "set); a stored hash made with others is made again at its account's next sign-in")
    parser.add_argument("--review-every", type=number(), default=5.0, metavar="SECONDS",
                        help="how often to look for a finished game without a review and review it, or, when the "
                             "analysis queue is idle, make again a review holding estimates (0: only when asked for)")
    parser.add_argument("--review-lease", type=number(above=True), default=600.0, metavar="SECONDS",
                        help="how long a node's claim on a game it reviews by itself holds before another node, or "
                             "this one restarted, takes it over (default: 600)")
    parser.add_argument("--kgp-port", type=port_number, default=None, metavar="PORT",
                        help="also let outside engines play over the Kalah Game Protocol on this TCP port "
                             "(KGP's usual port is 2671; 0: any free port; see docs/engines.md)")
    parser.add_argument("--bus", metavar="URL", default=None,
                        help="run as one node of a cluster: the Redis server between the nodes (redis://host:port); "
                             "every node needs the same --db postgresql://... (see docs/cluster.md)")
    parser.add_argument("--node-id", metavar="NAME", default=None,
                        help="this node's name in the cluster (default: a new one at each start)")
    parser.add_argument("--trusted-proxy", type=trusted_proxy, action="append", default=[], metavar="CIDR",
                        help="a reverse proxy's network (repeatable, e.g. 127.0.0.1/32): a connection from it is "
                             "counted by the client address it forwards (X-Forwarded-For, else Forwarded), never "
                             "a connection from elsewhere (see docs/operations.md)")
    parser.add_argument("--tls-cert", metavar="FILE", default=None,
                        help="serve https and wss on the port itself with this PEM certificate chain (with --tls-key; "
                             "behind a reverse proxy that gives TLS, leave it out)")
    parser.add_argument("--tls-key", metavar="FILE", default=None, help="the certificate's private key (PEM)")
    parser.add_argument("--kgp-variant", default="kalah(6,4,clock=5/move)", metavar="VARIANT",
                        help="the variant of the engines' games")


def origin(text: str) -> str:
    """A web page's origin `http(s)://host[:port]` (argparse type), in its canonical form."""
    canonical = canonical_origin(text)
    if canonical is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an origin http(s)://host[:port]")
    return canonical


def port_number(text: str) -> int:
    """A TCP port, 0..65535 (argparse type); anything else is refused rather than bound somewhere else."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number 0..65535")
    return port


def password_cost(text: str) -> PasswordCost:
    """argon2id's parameters `PASSES,MEMORY_KIB,LANES` (argparse type), each within what argon2 and a server allow."""
    parts = text.split(",")
    try:
        passes, memory, lanes = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not PASSES,MEMORY_KIB,LANES (e.g. 3,65536,4)") from None
    if not 1 <= passes <= 20 or not 1 <= lanes <= 16 or not 8 * lanes <= memory <= 4 << 20:
        raise argparse.ArgumentTypeError(f"{text!r}: passes 1..20, lanes 1..16, memory 8 KiB a lane .. 4 GiB "
                                         "(4194304 KiB)")
    return PasswordCost(time_cost=passes, memory_kib=memory, parallelism=lanes)


def trusted_proxy(text: str) -> str:
    """A trusted proxy's network, `10.0.0.0/8` or a bare address (argparse type)."""
    try:
        return str(proxy_network(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def bind_failure(exc: OSError, host: str) -> str:
    """One line saying why the server could not listen on `host` (or what else failed at start-up)."""
    text = exc.strerror or str(exc)
    if isinstance(exc, socket.gaierror):
        return f"cannot listen on host {host!r}: {text}"
    if exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
        where = re.search(r"address \('([^']*)', (\d+)", text)
        reason = text.rsplit(": ", 1)[-1]
        address = f"{where[1]}:{where[2]}" if where else "the address"
        hint = " (another server there? --port 0 takes any free port)" if exc.errno == errno.EADDRINUSE else ""
        return f"cannot listen on {address}: {reason}{hint}"
    return f"{text}: {exc.filename}" if exc.filename else text


def fast_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop when it is installed (unless KALAH_LOOP=asyncio), else asyncio's own."""
    if os.environ.get("KALAH_LOOP") == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


async def _main(args: argparse.Namespace, logs: EventFormatter, token: str | None) -> None:
    """Start the server, print where it listens, and serve until a stop signal."""
    db = args.db or default_db_path()
    logs.node = args.node_id if args.bus else None
    # watching from the start (loading a large database holds the loop too); armed before "listening" is printed
    stalls = asyncio.create_task(watch_stalls(args.stall_trace)) if args.stall_trace > 0 else None
    running = await start_server(db, args.host, args.port, grace_s=args.grace,
                                 max_connections=args.max_connections, synchronous=args.synchronous,
                                 rate=args.rate, burst=args.burst, idle_s=args.idle_limit or None,
                                 operator_token=token, max_per_address=args.max_per_address,
                                 hello_timeout=args.hello_timeout, kgp_port=args.kgp_port,
                                 kgp_variant=args.kgp_variant, bus=args.bus, node_id=args.node_id,
                                 trusted_proxies=tuple(args.trusted_proxy),
                                 allowed_origins=tuple(args.allowed_origin), tls_cert=args.tls_cert,
                                 tls_key=args.tls_key, review_every_s=args.review_every or None,
                                 review_lease_s=args.review_lease,
                                 password_cost=args.password_cost)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    node_id = running.arena.replication.node_id
    if node_id is not None:
        logs.node = node_id
    node = "" if node_id is None else f", node {node_id} on bus {args.bus}"
    say(f"kalah server listening on {running.url} (database {describe(db)}{node})")
    if running.secure:
        say(f"web pages on {running.web_url}")
    if running.kgp is not None:
        say(f"KGP engines on tcp://{running.host}:{running.kgp.port}")
    announce(getattr(running.arena.bots, "engines", None), sys.stdout.isatty(), say)
    tuner = asyncio.create_task(keep_heap_frozen(args.gc_freeze, pressed=running.pressed)) \
        if args.gc_freeze > 0 else None
    await serve_forever(running, stop)
    for task in (tuner, stalls):
        if task is not None:
            task.cancel()


def say(line: str) -> None:
    """Print a line in one write: the log lines, written by a thread of their own, never split it in a terminal."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def run(args: argparse.Namespace) -> int:
    """Run the server; exit 0 after a graceful shutdown."""
    token = operator_token(args, "serve")  # before anything starts: a file it cannot read is one line
    logs = configure_logs(args.log_level, args.log_format)
    kgp_files = GatewayOptions().kgp_max_connections if args.kgp_port is not None else 0
    short = fit_open_files(files_needed(args.max_connections, ServerOptions().max_handshakes, kgp_files))
    if short is not None:
        raise CommandError(short)
    # The storage thread hands the GIL back and forth with the event loop a few times per
    # commit; a shorter switch interval (default 5 ms) keeps group commits quick under load.
    sys.setswitchinterval(float(os.environ.get("KALAH_SWITCH_INTERVAL", "0.001")))
    try:
        with asyncio.Runner(loop_factory=fast_loop_factory()) as runner:
            runner.run(_main(args, logs, token))
    except OSError as exc:
        raise CommandError(bind_failure(exc, args.host), status=1) from None
    except (StorageError, SchemaError, TlsError) as exc:
        raise CommandError(str(exc), status=1) from None
    return 0
