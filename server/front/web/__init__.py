"""The web pages: `/`, `/play/MATCH`, `/watch/MATCH` and `/game/MATCH` over plain HTTP on the server's port."""

from server.front.web.site import ClaimLimits, Site, respond

__all__ = ["ClaimLimits", "Site", "respond"]
