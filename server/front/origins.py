"""Which web pages may open a websocket to the server: the `Origin` check of the handshake.

A browser names the page that opens a websocket in its `Origin` header, and sends the player's
cookies with it whatever that page is, so a page on another site could otherwise open sockets from
the player's own address and spend their budgets (or, once signed in, act as them). The server's
own origin (the `Host` it was reached at, over http or https) and the origins the operator allows
(`kalah serve --allowed-origin`) are let in; a handshake without `Origin` is not a browser's page
(the terminal client, engines, scripts) and is welcome too. Everything else (`null`, another site)
gets 403. A front that learns the host and scheme from a trusted proxy passes them in.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable

DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_origin(text: str) -> str | None:
    """`scheme://host[:port]` of an http(s) origin, lower-cased and without its scheme's default port; None when
    `text` is not one (`null`, a path, another scheme)."""
    try:
        parts = urllib.parse.urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/") or parts.query \
            or parts.fragment or parts.username is not None:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}" if port in (None, DEFAULT_PORTS[scheme]) else f"{scheme}://{host}:{port}"


def own_origins(host_header: str | None, schemes: Iterable[str] = ("http", "https")) -> set[str]:
    """The origins of pages served by this server when it was reached at `Host: host_header` over `schemes`."""
    if not host_header:
        return set()
    return {origin for scheme in schemes if (origin := canonical_origin(f"{scheme}://{host_header}")) is not None}


def origin_allowed(origin: str | None, host_header: str | None, allowed: Iterable[str] = (),
                   schemes: Iterable[str] = ("http", "https")) -> bool:
    """Whether a websocket handshake with `Origin: origin` (None: without one) may open: no origin, the server's own
    (the `Host` it was reached at, over `schemes`), or one of `allowed` (canonical origins, see
    `canonical_origin`)."""
    if origin is None:
        return True
    canonical = canonical_origin(origin)
    return canonical is not None and (canonical in allowed or canonical in own_origins(host_header, schemes))
