"""The client's address of a connection: its TCP peer, or, when that peer is a trusted reverse proxy, the address the
proxy forwarded (`X-Forwarded-For`, else `Forwarded`), and whether that proxy says the client reached it over https
(`X-Forwarded-Proto`, else `Forwarded`'s `proto=`).

Only a peer inside one of the trusted networks (`kalah serve --trusted-proxy CIDR`) is believed: a header from
anyone else changes nothing. The forwarded chain is read from the right (the hop nearest the server) and the first
address that is not itself a trusted proxy is the client's, so what a client wrote at the left of the chain is never
taken. A chain that cannot be read (a name instead of an address, `unknown`, an obfuscated `_id`, garbage) leaves the
peer's own address: every client of a misconfigured proxy then shares the proxy's budgets, which is safe.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from websockets.datastructures import Headers

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
IP = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_HOPS = 32
"""Forwarded hops read at most (from the right); a longer chain is read as malformed."""


def proxy_network(text: str) -> Network:
    """A trusted proxy's network from `10.0.0.0/8`, `::1/128` or a bare address; ValueError with one line if not."""
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise ValueError(f"{text!r} is not a network address/prefix (e.g. 127.0.0.1/32 or 10.0.0.0/8)") from None


def _ip(text: str) -> IP | None:
    """An address as a client's (an IPv4-mapped IPv6 address as its IPv4), None if `text` is not one."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id is not None:
            return None
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
    return ip


def _node(text: str) -> IP | None:
    """The address of one forwarded hop: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]:5678`."""
    text = text.strip()
    if text.startswith("["):
        end = text.find("]")
        rest = text[end + 1:]
        if end < 0 or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return _ip(text[1:end])
    if text.count(":") == 1:  # an IPv4 address with a port
        host, port = text.split(":")
        return _ip(host) if port.isdigit() and isinstance(_ip(host), ipaddress.IPv4Address) else None
    return _ip(text)


def _forwarded_for(value: str) -> list[str] | None:
    """The `for=` nodes of a `Forwarded` header's elements (RFC 7239), in order; None if an element has none or
    cannot be read."""
    nodes = []
    for element in value.split(","):
        found = None
        for pair in element.split(";"):
            key, sep, raw = pair.partition("=")
            if not sep:
                return None
            if key.strip().lower() == "for":
                raw = raw.strip()
                if len(raw) >= 2 and raw[0] == raw[-1] == '"':
                    raw = raw[1:-1]
                found = raw
        if found is None:
            return None
        nodes.append(found)
    return nodes


def forwarded_chain(headers: Headers) -> list[str] | None:
    """The forwarded hops a request names, the client's first: `X-Forwarded-For` when present, else `Forwarded`;
    [] when neither is; None when the one read cannot be."""
    xff = headers.get_all("X-Forwarded-For")
    if xff:
        return [node.strip() for node in ",".join(xff).split(",")]
    forwarded = headers.get_all("Forwarded")
    return _forwarded_for(",".join(forwarded)) if forwarded else []


@dataclass(frozen=True)
class TrustedProxies:
    """The networks whose connections are reverse proxies to believe about the client's address."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, texts: Iterable[str]) -> TrustedProxies:
        """From texts such as `127.0.0.1/32` (ValueError, one line, for one that is not a network)."""
        return cls(tuple(proxy_network(text) for text in texts))

    def trusts(self, ip: IP) -> bool:
        """Whether `ip` is a trusted proxy."""
        return any(ip.version == net.version and ip in net for net in self.networks)

    def is_proxy(self, peer: str) -> bool:
        """Whether a connection's peer `peer` (an IPv4-mapped IPv6 address as its IPv4) is a trusted proxy."""
        ip = _ip(peer)
        return ip is not None and self.trusts(ip)

    def over_https(self, peer: str, headers: Headers | None) -> bool:
        """Whether a trusted proxy `peer` says the request reached it over https: the right-most `X-Forwarded-Proto`
        (else the last `proto=` of `Forwarded`) is `https`. Anyone else's header is never believed."""
        if headers is None or not self.is_proxy(peer):
            return False
        values = ",".join(headers.get_all("X-Forwarded-Proto")).split(",")
        if not values[-1].strip():
            protos = [pair.partition("=")[2] for pair in ",".join(headers.get_all("Forwarded")).replace(",", ";")
                      .split(";") if pair.strip().lower().startswith("proto=")]
            values = protos or [""]
        return values[-1].strip().strip('"').lower() == "https"

    def client(self, peer: str, headers: Headers | None) -> str:
        """The client's address of a connection from `peer` whose request had `headers` (None: no request yet)."""
        peer_ip = _ip(peer)
        if headers is None or peer_ip is None or not self.trusts(peer_ip):
            return peer
        chain = forwarded_chain(headers)
        if not chain or len(chain) > MAX_HOPS:
            return peer
        client = peer_ip
        for text in reversed(chain):
            ip = _node(text)
            if ip is None:
                return peer  # a hop we would have to believe cannot be read: the proxy's own address
            client = ip
            if not self.trusts(ip):
                break
        return str(client)


NO_PROXIES = TrustedProxies()
"""A server that trusts no proxy: every connection is counted by its peer's address."""


def peer_host(address: object) -> str:
    """The host alone of a socket's peer address (`('1.2.3.4', 5678)` -> `1.2.3.4`)."""
    return str(address[0]) if isinstance(address, tuple) and address else str(address)


def peer_remote(address: object) -> str:
    """A socket's peer address as `host:port`, for logs."""
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) and len(address) >= 2 else str(address)
