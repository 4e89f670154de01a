"""The HTTP side of the web pages (lobby, play and watch, replay, events): routes, static files, and their headers.

Pages are the package's `static/*.html` with `%STATIC%` replaced by `/static/VERSION` (and `%GRACE_MS%`,
`%IDLE_MS%` by the server's claim limits, which the play page needs to offer a claim only once the server would
accept it), VERSION a digest of
every static file: a page is revalidated on each load (`no-cache`, with an ETag), and the files it names are
cached for good (`immutable`), since a change of any file changes every address. Each answer carries a strict
Content-Security-Policy: only this server's own scripts, styles, images and websocket. A websocket handshake,
on any path, is left to the websocket server.
"""

from __future__ import annotations

import email.utils
import hashlib
import re
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus
from importlib import resources

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
PAGES = {"": "index.html", "watch": "watch.html", "play": "watch.html", "game": "game.html",
         "events": "events.html", "event": "event.html", "account": "account.html", "puzzles": "puzzles.html",
         "puzzle": "puzzles.html", "explore": "explore.html"}
"""The first segment of a page's path -> its file (`/`, `/watch/MATCH`, `/play/MATCH`, `/game/MATCH`, `/events`,
`/event/EVENT`, `/account`, `/puzzles`, `/puzzle/ID`, `/explore`): the watch page turns into the play page for a
player seated in the match."""
_PAGE = re.compile(r"/(?:(watch|play|game|event|puzzle)/[A-Za-z0-9_-]{1,64}|(events|account|puzzles|puzzle|explore))?")
_STATIC = re.compile(r"/static/([0-9a-f]{1,32})/([a-z0-9_-]{1,40}\.[a-z]{2,4})")
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(?::\d{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](?::\d{1,5})?")
FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@dataclass(frozen=True, slots=True)
class Asset:
    """One file as served: its bytes, content type and entity tag."""

    body: bytes
    content_type: str
    etag: str

    @classmethod
    def of(cls, name: str, body: bytes) -> Asset:
        """The asset of file `name` with these bytes."""
        suffix = name[name.rfind("."):]
        return cls(body, CONTENT_TYPES[suffix], '"' + hashlib.sha256(body).hexdigest()[:20] + '"')


@dataclass(frozen=True, slots=True)
class ClaimLimits:
    """When the server accepts a claim: the grace period of an absent opponent, and (untimed games) the no-move
    limit of an opponent to move (None: none), in seconds, as `kalah serve --grace` and `--idle-limit` set them."""

    grace_s: float = 60.0
    idle_s: float | None = 900.0

    def words(self) -> dict[bytes, bytes]:
        """What the pages' `%GRACE_MS%` and `%IDLE_MS%` become (an empty `%IDLE_MS%`: no limit)."""
        idle = b"" if self.idle_s is None else str(round(self.idle_s * 1000)).encode()
        return {b"%GRACE_MS%": str(round(self.grace_s * 1000)).encode(), b"%IDLE_MS%": idle}


def _fill(body: bytes, words: dict[bytes, bytes]) -> bytes:
    """A page with each placeholder replaced."""
    for word, value in words.items():
        body = body.replace(word, value)
    return body


def policy(host: str | None) -> str:
    """The Content-Security-Policy: nothing but this server's own files and websocket."""
    sockets = f" ws://{host} wss://{host}" if host and _HOST.fullmatch(host) else ""
    return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            f"connect-src 'self'{sockets}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class Site:
    """The pages and static files of one version of the package, and the HTTP answers to requests for them."""

    def __init__(self, files: dict[str, bytes], claims: ClaimLimits | None = None) -> None:
        digest = hashlib.sha256()
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        self.version = digest.hexdigest()[:12]
        words = {b"%STATIC%": f"/static/{self.version}".encode(), **(claims or ClaimLimits()).words()}
        self.assets = {name: Asset.of(name, body) for name, body in files.items() if not name.endswith(".html")}
        self.pages = {name: Asset.of(name, _fill(body, words))
                      for name, body in files.items() if name.endswith(".html")}

    @classmethod
    def load(cls, claims: ClaimLimits | None = None) -> Site:
        """The site of the files in this package's `static/` folder."""
        folder = resources.files("server.front.web").joinpath("static")
        return cls({f.name: f.read_bytes() for f in folder.iterdir()
                    if f.is_file() and f.name[f.name.rfind("."):] in CONTENT_TYPES}, claims)

    def respond(self, request: Request) -> Response | None:
        """The answer to a plain HTTP request for a page or a static file; None for a websocket handshake."""
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.split("?", 1)[0]
        if (page := _PAGE.fullmatch(path)) is not None:
            return self.answer(request, self.pages[PAGES[page[1] or page[2] or ""]], REVALIDATE)
        if (static := _STATIC.fullmatch(path)) is not None and static[2] in self.assets:
            return self.answer(request, self.assets[static[2]], FOREVER if static[1] == self.version else REVALIDATE)
        if path == "/favicon.ico":
            return self.answer(request, self.assets["favicon.svg"], REVALIDATE)
        return self.plain(request, HTTPStatus.NOT_FOUND,
                          "not found: the pages are /, /play/MATCH, /watch/MATCH, /game/MATCH, /events, /event/ID, "
                          "/account, /puzzles (or /puzzle), /puzzle/ID and /explore\n")

    def answer(self, request: Request, asset: Asset, caching: str) -> Response:
        """An asset, or 304 Not Modified when the client holds this very version."""
        fresh = asset.etag in (tag.strip() for tag in request.headers.get("If-None-Match", "").split(","))
        status = HTTPStatus.NOT_MODIFIED if fresh else HTTPStatus.OK
        body = b"" if fresh else asset.body
        headers = self.headers(request, len(body), asset.content_type)
        headers["ETag"] = asset.etag
        headers["Cache-Control"] = caching
        return Response(status.value, status.phrase, headers, body)

    def plain(self, request: Request, status: HTTPStatus, text: str) -> Response:
        """A short plain-text answer (an error)."""
        body = text.encode()
        headers = self.headers(request, len(body), "text/plain; charset=utf-8")
        headers["Cache-Control"] = "no-store"
        return Response(status.value, status.phrase, headers, body)

    @staticmethod
    def headers(request: Request, length: int, content_type: str) -> Headers:
        """The headers of every answer: length and type, and the security policy."""
        return Headers([
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(length)),
            ("Content-Type", content_type),
            ("Content-Security-Policy", policy(request.headers.get("Host"))),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cross-Origin-Opener-Policy", "same-origin"),
        ])


@cache
def site(claims: ClaimLimits = ClaimLimits()) -> Site:
    """The site of the installed package for a server's claim limits (its files read once)."""
    return Site.load(claims)


def respond(request: Request, claims: ClaimLimits = ClaimLimits()) -> Response | None:
    """The web pages' answer to a plain HTTP request; None for a websocket handshake."""
    return site(claims).respond(request)
