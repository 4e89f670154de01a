"""Network addresses as budgets count them: an address, an IPv6 /64, a network prefix."""

from __future__ import annotations

import ipaddress

IPV4_PREFIX = 24
IPV6_PREFIX = 64
def address_of(host: str) -> str:
    """The unit of per-address budgets: an IPv4 address itself, an IPv6 address's /64 (one customer's)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        return prefix_of(host) if ip.ipv4_mapped is None else str(ip.ipv4_mapped)
    return host


def prefix_of(host: str, v4: int = IPV4_PREFIX, v6: int = IPV6_PREFIX) -> str:
    """The network prefix an address counts in (`10.1.2.0/24`, `2001:db8::/64`); a non-IP host is its own."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    bits = v4 if ip.version == 4 else v6
    return str(ipaddress.ip_network(f"{ip}/{bits}", strict=False))
