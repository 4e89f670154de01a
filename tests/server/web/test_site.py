"""The web pages over plain HTTP on the server's port: routes, content types, caching, security headers."""

from __future__ import annotations

import asyncio
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from server.assembly import RunningServer
from server.front.web.site import CONTENT_TYPES, Site
from tests.conftest import Serve
from tests.helpers.paths import ROOT_DIR
from tests.helpers.wire import Client

ROOT = ROOT_DIR
STATIC = ROOT / "server" / "front" / "web" / "static"


@dataclass
class Answer:
    """An HTTP response: status, headers (lower-case names) and body."""

    status: int
    headers: dict[str, str]
    body: bytes


async def get(server: RunningServer, path: str, **headers: str) -> Answer:
    """GET `path` from the server over a plain socket (HTTP/1.1, the server closes after answering)."""
    reader, writer = await asyncio.open_connection(server.host, server.port)
    lines = [f"GET {path} HTTP/1.1", f"Host: {server.host}:{server.port}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    raw = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    await writer.wait_closed()
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in header_lines)
    return Answer(int(status_line.split()[1]), {k.lower(): v for k, v in fields.items()}, body)


def assets_named(page: bytes) -> list[str]:
    """The static addresses a page names (its stylesheet, script and icon)."""
    return re.findall(r'(?:href|src)="(/static/[^"]+)"', page.decode())


async def test_pages_are_html_revalidated_each_load_under_a_strict_policy(arena: RunningServer) -> None:
    """/, /watch/ID, /game/ID, /events, /event/ID, /puzzles, /puzzle/ID and /explore are HTML, `no-cache` with an ETag,
    under a CSP that allows only this server."""
    for path in ("/", "/watch/m123", "/play/m123", "/game/lad-abc-00001", "/?from=somewhere", "/events",
                 "/event/e3f8b8dd63ad", "/puzzles", "/puzzle", "/puzzle/zf878f802a1324ae", "/explore",
                 "/explore?variant=kalah(2,3)&moves=1%205"):
        answer = await get(arena, path)
        assert answer.status == 200, path
        assert answer.headers["content-type"] == "text/html; charset=utf-8"
        assert answer.headers["cache-control"] == "no-cache"
        assert answer.headers["x-content-type-options"] == "nosniff"
        csp = answer.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self';" in csp and "style-src 'self';" in csp
        assert f"connect-src 'self' ws://{arena.host}:{arena.port}" in csp and "frame-ancestors 'none'" in csp
        assert int(answer.headers["content-length"]) == len(answer.body)
        assert b"<script" in answer.body and b"%STATIC%" not in answer.body
        again = await get(arena, path, If_None_Match=answer.headers["etag"])
        assert again.status == 304 and again.body == b""


async def test_static_files_are_cached_for_good_under_their_version(arena: RunningServer) -> None:
    """Every file a page names is served with its content type and `immutable`; an old version revalidates."""
    page = await get(arena, "/watch/m1")
    named = assets_named(page.body)
    assert {name.rsplit("/", 1)[1] for name in named} == {"style.css", "watch.js", "favicon.svg"}
    for address in named:
        answer = await get(arena, address)
        assert answer.status == 200
        assert answer.headers["content-type"] == CONTENT_TYPES[address[address.rfind("."):]]
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert answer.body == (STATIC / address.rsplit("/", 1)[1]).read_bytes()
    old = await get(arena, "/static/000000000000/watch.js")
    assert old.status == 200 and old.headers["cache-control"] == "no-cache"


async def test_every_module_a_script_imports_is_served(arena: RunningServer) -> None:
    """The scripts' relative imports (`./kalah.js`) resolve to files of the same version."""
    version = assets_named((await get(arena, "/")).body)[0].split("/")[2]
    for script in STATIC.glob("*.js"):
        for module in re.findall(r'from "\./([a-z]+\.js)"', script.read_text()):
            answer = await get(arena, f"/static/{version}/{module}")
            assert answer.status == 200, (script.name, module)
            assert answer.headers["content-type"] == "text/javascript; charset=utf-8"


async def test_unknown_addresses_are_not_found(arena: RunningServer) -> None:
    """Anything but the pages and the package's files is 404, including paths that try to leave the folder."""
    for path in ("/nope", "/watch/", "/watch/a/b", "/game/bad%20id", "/static/x/site.py", "/static/abc/../site.py",
                 "/static/abc/%2e%2e%2fsite.py", "/static/abc/index.html", "/events/x", "/event/", "/event"):
        answer = await get(arena, path)
        assert answer.status == 404, path
        assert answer.headers["content-type"].startswith("text/plain")


async def test_websockets_and_health_still_share_the_port(arena: RunningServer) -> None:
    """A websocket handshake on / is still the game server, and /health still answers JSON."""
    client = await Client.open(arena.url, "player")
    assert client.welcome["name"] == "player"
    await client.close()
    health = await get(arena, "/health")
    assert health.status == 200 and health.headers["content-type"] == "application/json"


def test_the_files_are_package_data_with_no_outside_address() -> None:
    """Every static file is packaged (pyproject's package-data) and names no other site (no CDN)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "server.front.web" in config["packages"]
    assert config["package-data"]["server.front.web"] == ["static/*"]
    site = Site.load()
    assert set(site.pages) == {"index.html", "watch.html", "game.html", "events.html", "event.html", "account.html",
                               "puzzles.html", "explore.html"}
    assert {p.name for p in STATIC.iterdir()} == set(site.pages) | set(site.assets)
    for path in STATIC.iterdir():
        text = path.read_text().replace("http://www.w3.org/2000/svg", "")  # the SVG namespace is a name
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text), path
        assert "<style" not in text and " style=" not in text and "onclick" not in text, path  # nothing inline


def test_a_change_to_any_file_changes_the_version() -> None:
    """The version in every address is a digest of all the files: any change gives new addresses."""
    files = {"index.html": b'<link href="%STATIC%/a.css">', "a.css": b"p {}"}
    one, two = Site(files), Site({**files, "a.css": b"p { color: red }"})
    assert one.version != two.version
    assert one.pages["index.html"].body == f'<link href="/static/{one.version}/a.css">'.encode()


async def test_the_match_page_carries_the_servers_claim_limits(serve: Serve, tmp_path: Path) -> None:
    """/play/ID and /watch/ID name the server's grace period and no-move limit (none: empty), so that the page
    offers a claim only once the server would accept it; the page is still one cached asset per server."""
    arena = await serve(grace_s=2.5, idle_s=None)
    for path in ("/play/m1", "/watch/m1"):
        page = await get(arena, path)
        assert b'data-grace-ms="2500" data-idle-ms=""' in page.body, path
        assert b"%" not in page.body.replace(b"100%", b"")
    default = await serve(tmp_path / "other.sqlite3")
    assert b'data-grace-ms="60000" data-idle-ms="900000"' in (await get(default, "/play/m1")).body
