"""The open-files limit a server needs: every connection, and every connection still in its handshake, holds one.

Checked before the server listens: a soft limit below what the configured caps need is raised up
to the hard limit where the system allows; if even that is too low the caps could never be
reached (the process would fail to accept, and `/health` with it, well before them), so the
server refuses to start in one line naming the fix.
"""

from __future__ import annotations

import resource

from server.logs import event as log_event

RESERVED_FILES = 256
"""Open files kept beside the connections: the database and its journal, the listening sockets, logs, the hosted
bots' endgame databases, the analysis and engine processes' pipes."""


def files_needed(connections: int, handshakes: int, kgp_connections: int = 0) -> int:
    """Open files a server with these caps may hold at once."""
    return connections + handshakes + kgp_connections + RESERVED_FILES


def fit_open_files(needed: int, flag: str = "--max-connections") -> str | None:
    """Make the soft open-files limit at least `needed` (up to the hard limit); None when it is, else the one line
    saying why the server cannot start and what to change (`flag` names the cap to lower)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return None
    target = needed if hard == resource.RLIM_INFINITY else min(hard, needed)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            log_event("open_files_raised", soft=target, was=soft, hard=hard, needed=needed)
            soft = target
        except (ValueError, OSError):
            pass
    if soft >= needed:
        return None
    shown_hard = "unlimited" if hard == resource.RLIM_INFINITY else str(hard)
    return (f"the connection caps need up to {needed} open files, but this process may open only {soft} (hard limit "
            f"{shown_hard}): raise the limit (ulimit -n {needed}, or LimitNOFILE={needed} in a systemd unit) or lower "
            f"{flag}")
