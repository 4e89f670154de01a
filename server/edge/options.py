"""A server's connection-level limits and settings: what `start_server` takes beside the arena's options."""

from __future__ import annotations

from dataclasses import dataclass

from bots.engines import DEFAULT_MAX_BYTES, DEFAULT_MAX_TABLE_BYTES
from protocol.messages import MAX_MESSAGE_BYTES
from server.core.hosted import PlayerFactory
from server.edge.connection import MAX_UNREAD
from server.edge.session import DEFAULT_SEND_BUFFER


@dataclass
class ServerOptions:
    """Connection-level limits; unknown keyword options of `start_server` are refused."""

    max_connections: int = 10_000
    max_message_bytes: int = MAX_MESSAGE_BYTES
    rate: float = 30.0
    """Messages per second a connection may send on average."""
    burst: int = 60
    """Messages a connection may send at once."""
    max_refused: int = 200
    """Messages refused for rate or a full quota (`rate_limited`, `too_many`) before the connection is closed
    (1008)."""
    ping_interval: float | None = 20.0
    ping_timeout: float | None = 20.0
    synchronous: str = "FULL"
    backlog: int = 2048
    """Pending TCP connections the kernel may queue while the loop is busy (a short queue drops SYNs)."""
    bot_factory: PlayerFactory | None = None
    bot_workers: int = 2
    """Search threads that take any hosted bot's move (humans' games first)."""
    bot_reserved: int = 1
    """More threads that take only moves in games with a human seat."""
    bot_max_queued: int = 64
    """Exhibition moves that may wait; beyond, a move is a random legal one."""
    engine_bytes: int = DEFAULT_MAX_BYTES
    """Memory the hosted bots' search engines may hold in all (estimated): tables and databases."""
    table_bytes: int = DEFAULT_MAX_TABLE_BYTES
    """Memory their transposition tables may hold (what many different bot ids multiply)."""
    send_buffer: int = DEFAULT_SEND_BUFFER
    """Bytes a connection may leave unread before it is dropped."""
    seatless_send_buffer: int = 256 * 1024
    """Bytes a connection without a seat in an unfinished match may leave unread before it is dropped."""
    hello_timeout: float = 10.0
    """Seconds a connection may stay without saying hello (public reads are served meanwhile)."""
    flood_cooling_s: float = 10.0
    """After a connection of an address is closed for flooding (`max_refused`), how long new connections from
    that address are refused (HTTP 429 with `Retry-After`)."""
    refusal_pause_after: int = 30
    """Load refusals (`rate_limited`, `too_many`) in a row after which the server waits out each one's retry hint
    (at most 1 s) before it reads the connection's next message: a client that ignores the hints is read slowly,
    its frames waiting in its own socket, instead of costing a refusal each."""
    max_anonymous: int = 1_000
    """Connections that have not said hello, in all; at the limit a newcomer from another network than the one
    holding the most of them makes that network's oldest one close (1013), else it gets HTTP 503."""
    max_per_address: int = 64
    """Connections one network address (an IPv6 /64) may hold at once."""
    max_per_prefix: int = 256
    """Connections one network prefix (an IPv4 /24, an IPv6 /64) may hold at once."""
    read_rows_rate: float = 2000.0
    """Rows of public reads (listings, stored games, standings) an address may fetch a second."""
    read_rows_burst: int = 4000
    all_read_rows_rate: float = 20_000.0
    """Rows of public reads all addresses together may fetch a second (bursts of twice that)."""
    network_read_rows_rate: float = 5_000.0
    """Rows of public reads the addresses of one network (an IPv4 /24, an IPv6 /64) may fetch together a second
    (bursts of twice that): many addresses of one network cannot take the whole server's budget."""
    address_rate: float = 200.0
    """Messages a second the connections of one address may send in all."""
    address_burst: int = 400
    bus: str | None = None
    """The Redis URL of a cluster (`redis://host:port`): this server is one node of several on one
    PostgreSQL database (see docs/cluster.md); None: a server on its own."""
    node_id: str | None = None
    tls_cert: str | None = None
    """A PEM certificate chain: the port serves https and wss itself (with `tls_key`; see `server.edge.tls`)."""
    tls_key: str | None = None
    """The certificate's private key (PEM, unencrypted)."""
    trusted_proxies: tuple[str, ...] = ()
    """Networks of reverse proxies (`127.0.0.1/32`, `10.0.0.0/8`) whose connections' client address is read from
    `X-Forwarded-For` (else `Forwarded`): the right-most address that is not itself a trusted proxy. A connection
    from anywhere else is counted by its own address, whatever it sends (see `server.edge.client_address`)."""
    """This node's name in the cluster (default: a new one at each start)."""
    overload_lag_s: float = 0.2
    """Event-loop lag that, three samples (50 ms apart) in a row, marks the server overloaded: then connections
    without a seat in an unfinished match (lobby reads, spectators, analyses, exhibitions, unauthenticated ones)
    are slowed to `overload_rate`."""
    overload_hold_s: float = 1.0
    """How long the server stays marked overloaded after the loop last fell behind."""
    overload_rate: float = 2.0
    """Messages a second (bursts of 10) a connection without a seat may send while the server is overloaded."""
    shared_reads_s: float = 1.0
    """While the server is overloaded, the lobby's list and a page of stored games are made at most once in
    this many seconds, the answer shared by every client that asks alike (each charged its rows)."""
    overload_address_rate: float = 10.0
    """Messages a second (bursts of twice that) the connections without a seat of one address may send in all
    while the server is overloaded (many connections of one address get no more than a few)."""
    seatless_lag_s: float = 0.05
    """Event-loop lag (one sample) past which messages of connections without a seat in an unfinished match wait
    at the seatless gate, let through in turns by network at the pace the loop keeps (see `server.edge.gate`)."""
    seatless_hold_s: float = 1.0
    """How long after the loop last fell behind (and while any message still waits) the gate stays in force."""
    seatless_busy: float = 0.5
    """The share of a core the event loop's thread may use while messages wait at the seatless gate (beyond it
    fewer pass): the rest is left to the threads that serve seated players too (their bots, the database's)."""
    analysis_busy: float = 0.25
    """The share of a core the analysis thread may use for fresh identities' analyses while the server is under
    pressure (the seatless gate is in force, or a hosted bot thinks a move in a match with a person): after an
    analysis that used `c` CPU seconds the next waits `c * (1 / analysis_busy - 1)`, keeping its place in the
    queue, and each started then thinks at most 250 ms (see `server.front.analysis`)."""
    analysis_player_busy: float = 0.5
    """The same share for the analyses of identities that played here (`server.core.played`), served first."""
    review_every_s: float | None = None
    """How often the server looks for finished games without a review and reviews one (None: reviews are made only
    when asked for; see `server.front.reviews`)."""
    review_lease_s: float = 600.0
    """How long a node's claim on a finished game it reviews by itself (or on a review it makes again) holds: past it,
    another node, or this one restarted, takes the game over (a node that died mid-review leaves its claim)."""
    review_redos: int = 3
    """How many times at most a stored review with estimates is made again when the analysis queue is idle."""
    guard_sweep_s: float = 600.0
    """How often the claims in `guards` whose time has passed are deleted (also once at start; see
    `server.front.guard_sweep`)."""
    max_unread: int = MAX_UNREAD
    """Messages a client may have sent that the server has not read yet (reading stops past 16, but only after the
    read that passed them); past it the connection is dropped (`unread_close` logged)."""
    allowed_origins: tuple[str, ...] = ()
    """Origins of web pages on other sites that may open websockets here (`https://host[:port]`), beside the server's
    own (the `Host` it was reached at); a handshake with any other `Origin` gets HTTP 403 (see
    `server.front.origins`)."""
    handshake_timeout: float = 10.0
    """Seconds a connection may take to send its HTTP request and be answered (websockets' `open_timeout`)."""
    max_handshakes: int = 1_000
    """Connections whose HTTP request has not fully arrived, in all; at the bound a newcomer from another network
    than the one holding the most makes that network's oldest drop, else it is dropped (see
    `server.edge.handshakes`)."""
    max_handshakes_per_address: int = 64
    """Connections in their handshake one address (an IPv6 /64) may hold (as many as it may hold open, so an honest
    burst of connections is never cut short by it); past it a new one is dropped at accept."""
    max_handshakes_per_prefix: int = 256
    """Connections in their handshake one network (an IPv4 /24, an IPv6 /64) may hold."""
    socket_send_buffer: int = 256 * 1024
    """The kernel's send buffer of each connection: small enough that a client that stopped
    reading fills it soon, and the server's own bound (`send_buffer`) then drops it."""
