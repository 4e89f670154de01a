"""The spectator web page: `/`, `/watch/MATCH` and `/game/MATCH` over plain HTTP on the server's port."""

from server.web.site import Site, respond

__all__ = ["Site", "respond"]
