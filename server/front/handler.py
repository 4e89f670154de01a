"""The front door of the port: each websocket connection's loop, and the HTTP side (`/health`, `/metrics`, pages)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Coroutine
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol.errors import BadFieldError, KalahError
from protocol.messages import ErrorMessage, Message, decode_client
from server.core.errors import InternalError
from server.edge.connection import forwarded_https
from server.edge.options import ServerOptions
from server.edge.session import Session
from server.front.account_http import AccountHttp, is_account_path, session_cookie
from server.front.admission import Admission, host_of
from server.front.metrics import Metrics
from server.front.metrics import respond as metrics_page
from server.front.moderation import refuse_banned
from server.front.origins import canonical_origin, origin_allowed
from server.front.outside_engines.gateway import Gateway
from server.front.outside_engines.ws_link import is_kgp, serve_kgp
from server.front.router import Router
from server.front.web import ClaimLimits
from server.front.web import respond as web_page
from server.logs import event as log_event
from server.storage import is_database_failure
from server.storage.writer import unavailable

STORE_HEADER = "Kalah-Store"
"""The handshake header that names the server's database (its random identity, the same on every node)."""

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


def allowed_origins(origins: tuple[str, ...]) -> frozenset[str]:
    """The canonical form of each configured origin; ValueError naming one that is not `http(s)://host[:port]`."""
    canonical = {origin: canonical_origin(origin) for origin in origins}
    bad = [origin for origin, value in canonical.items() if value is None]
    if bad:
        raise ValueError(f"allowed origin {bad[0]!r} is not an origin http(s)://host[:port]")
    return frozenset(value for value in canonical.values() if value is not None)


class ConnectionHandler:
    """The per-connection loop and the HTTP side of the port."""

    def __init__(self, router: Router, admission: Admission, metrics: Metrics, opts: ServerOptions, store: str,
                 kgp: Callable[[], Gateway | None] = lambda: None) -> None:
        self.router = router
        self.admission = admission
        self.metrics = metrics
        """The server's registry, exported at `/metrics`."""
        self.opts = opts
        self.store = store
        """The database's identity, announced in every handshake's `Kalah-Store` header."""
        self.kgp = kgp
        """The KGP gateway, which also serves agents at `/kgp` (None until it listens, or without one)."""
        self.allowed_origins = allowed_origins(opts.allowed_origins)
        """The canonical origins of other sites' pages that may open websockets here."""
        self.account_http = AccountHttp(router.arena.accounts, router.arena.passkeys, self.allowed_origins,
                                        opts.tls_cert is not None, router.arena.quotas.take_identity)
        """The browser's sign-in over HTTP (`/account/...`), which sets the session cookie."""

    def process_request(self, conn: ServerConnection,
                        request: Request) -> Response | Coroutine[Any, Any, Response] | None:
        """Answer `/health`, accounts' `/account/...` and the spectator page over plain HTTP; refuse new connections
        beyond the limit (503)."""
        arena = self.router.arena
        if is_account_path(request):
            return self.account_http.respond(request, host_of(conn), forwarded_https(conn, request.headers))
        if request.path.split("?")[0] == "/metrics":
            return metrics_page(conn, request, arena, self.metrics, self.router.moderation.operator, host_of(conn))
        if request.path.split("?")[0] == "/health":
            status = HTTPStatus.SERVICE_UNAVAILABLE if arena.closing else HTTPStatus.OK
            body: dict[str, object] = {"status": "closing" if arena.closing else "ok",
                    "connections": self.admission.connections, "handshakes": self.admission.handshakes.count,
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
        return self.refuse_origin(conn, request) or self.admission.refuse(conn)

    def refuse_origin(self, conn: ServerConnection, request: Request) -> Response | None:
        """HTTP 403 for a websocket handshake from a page of another site (see `server.front.origins`), else None."""
        origins, hosts = request.headers.get_all("Origin"), request.headers.get_all("Host")
        if len(origins) <= 1 and len(hosts) <= 1 and origin_allowed(origins[0] if origins else None,
                                                                    hosts[0] if hosts else None, self.allowed_origins):
            return None
        log_event("connection_refused", remote=host_of(conn), reason="origin", origin=", ".join(origins)[:200])
        self.router.arena.metrics.refused("http_403")
        return conn.respond(HTTPStatus.FORBIDDEN, "this page's origin may not open a websocket here: open the "
                            "server's own page, or ask its operator to allow the origin (kalah serve "
                            "--allowed-origin)\n")

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
            await serve_kgp(self.kgp(), ws)
            return
        if self.router.moderation.address_banned(host_of(ws)):
            self.router.arena.metrics.refused("banned")
            await refuse_banned(ws)
            return
        admission = self.admission
        session = admission.admit(ws)
        session.cookie_session = session_cookie(ws.request.headers) if ws.request is not None else None
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
