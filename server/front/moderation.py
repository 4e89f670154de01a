"""The operator's moderation: bans of players and addresses, aborted matches, renamed and closed identities,
cancelled and hidden events.

Every act needs the operator token, is stored with an audit row (who, when, why) in the same
write, and takes effect at once on the node that served it. The bans table is the truth for
every node: each node reads it (and the audit rows made since it last looked) every
`refresh_s`, so a ban made on one node refuses new connections and closes live ones on all of
them within that time.

Audit numbers are handed out when an act is written, not when it commits: on PostgreSQL an act
can commit after one with a higher number. A number the poll skipped is therefore looked for
again on every poll for `GAP_S`, so a rename or close committed late still reaches every node.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from protocol.errors import (
    BadFieldError,
    BannedError,
    GameOverError,
    NotOperatorError,
    NotStartedError,
)
from protocol.messages import ErrorMessage, Moderate, Moderated, ModerationRow, encode
from server.core.follower import Follower
from server.core.networks import IPV6_PREFIX, address_of
from server.core.tokens import player_of_token
from server.edge.session import Session
from server.front.operator_auth import OperatorAuth
from server.logs import event as log_event
from server.storage import StoredPlayer
from server.storage.moderation import (
    BanKind,
    last_audit,
    op_audit,
    op_ban,
    op_unban,
    player_id_named,
    read_audit_recent,
    read_audit_since,
    read_bans,
)

if TYPE_CHECKING:
    from server.core.arena import Arena

REFRESH_S = 1.0
"""How often a node reads the bans and the acts made on other nodes."""
GAP_S = 300.0
"""How long an audit number the poll skipped is looked for again (the act that took it may commit late; one
rolled back never does)."""
MAX_GAP = 1000
"""At most this many skipped numbers below one act are looked for."""
START_WINDOW = 100
"""At start, the numbers missing among this many below the latest act are looked for too."""


def canonical_address(text: str) -> str:
    """What a ban of an address covers, as the server counts addresses: an IPv4 address, an IPv6 address's /64
    (written `2001:db8::/64`, or any address in it); refuses anything else."""
    try:
        return address_of(str(ipaddress.ip_address(text.strip())))
    except ValueError:
        pass
    try:
        network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        network = None
    if network is None or network.version != 6 or network.prefixlen != IPV6_PREFIX:
        raise BadFieldError(f"moderate.target: {text!r} is not an IPv4 or IPv6 address (or an IPv6 /64)")
    return str(network)


async def refuse_banned(ws: ServerConnection) -> None:
    """Refuse a new connection from a banned address: a typed error, then closed (1008)."""
    error = ErrorMessage(code=BannedError.code, message="your address is banned by the server's operator",
                         request=None, match_id=None)
    with contextlib.suppress(ConnectionClosed):
        await ws.send(encode(error))
        await ws.close(1008, "banned")


def refuse(session: Follower, why: str) -> None:
    """Tell a connection it is banned (a typed error; an outside engine's in KGP) and close it (1008)."""
    session.dismiss(ErrorMessage(code=BannedError.code, message=why, request=None, match_id=None), "banned")


class Moderator:
    """The bans this node enforces, and the operator's acts."""

    def __init__(self, arena: Arena, refresh_s: float = REFRESH_S,
                 sessions_from: Callable[[str], Iterable[Session]] = lambda address: (),
                 on_bans: Callable[[], None] = lambda: None, operator: OperatorAuth | None = None,
                 cancel_event: Callable[[str], Awaitable[str]] | None = None) -> None:
        self.arena = arena
        self.operator = operator or OperatorAuth(arena.is_operator)
        """Checks the operator token wherever one is taken (here, `/metrics`, rated exhibitions), throttling and
        logging wrong ones by address and network."""
        self.refresh_s = refresh_s
        self.players: set[str] = set()
        """Ids of banned (or closed) players."""
        self.addresses: set[str] = set()
        self.events: set[str] = set()
        """Ids of the events the operator hid (stored as bans of kind `event`)."""
        self.cancel_event = cancel_event
        """Cancel an open or running event (the events' requests); what was done, in words."""
        self.sessions_from = sessions_from
        """The open connections from an address, hello said or not (the admission's peers)."""
        self.on_bans = on_bans
        """Close whatever else the bans now cover (the KGP gateway's agents)."""
        self._seen: int | None = None
        """The highest audit number this node has taken into account (None: not read yet)."""
        self._missing: dict[int, float] = {}
        """Audit numbers below `_seen` not read yet -> when the poll first missed them (monotonic seconds)."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Read the stored bans again every `refresh_s` (the server reads them once before it listens)."""
        self._task = asyncio.create_task(self._keep_fresh())

    async def close(self) -> None:
        """Stop reading."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _keep_fresh(self) -> None:
        """Refresh until cancelled; a database that fails a read is tried again next time."""
        while True:
            await asyncio.sleep(self.refresh_s)
            try:
                await self.refresh()
            except Exception as exc:
                log_event("moderation_refresh_failed", error=repr(exc), level=30)

    async def refresh(self) -> None:
        """Take up the stored bans and the acts made on other nodes: close what is newly banned."""
        storage = self.arena.storage
        if self._seen is None:
            self._seen = await last_audit(storage)
            since = max(0, self._seen - START_WINDOW)  # acts numbered lower than the latest may commit yet
            present = {entry.number for entry in await read_audit_since(storage, since)}
            now = time.monotonic()
            self._missing = {n: now for n in range(since + 1, self._seen) if n not in present}
        else:
            await self._catch_up()
        bans = await read_bans(storage)
        self.players = {b.target for b in bans if b.kind == "player"}
        self.addresses = {b.target for b in bans if b.kind == "address"}
        self.events = {b.target for b in bans if b.kind == "event"}
        for pid in self.players:
            self._close_player(pid)
        for address in self.addresses:
            self._close_address(address)
        self.on_bans()

    async def _catch_up(self) -> None:
        """Take up the acts audited since the last poll, and those the poll skipped that have committed since."""
        assert self._seen is not None
        now = time.monotonic()
        self._missing = {n: at for n, at in self._missing.items() if now - at < GAP_S}
        since = min(self._missing, default=self._seen + 1) - 1
        for entry in await read_audit_since(self.arena.storage, since):
            number = entry.number
            if number > self._seen:
                self._missing.update(dict.fromkeys(range(max(self._seen + 1, number - MAX_GAP), number), now))
                self._seen = number
            elif self._missing.pop(number, None) is None:
                continue  # taken up already
            if entry.action in ("rename", "close"):
                self.arena.identities.forget(entry.target)  # changed elsewhere: read back when asked

    # --- enforcement ----------------------------------------------------------------------------

    def address_banned(self, address: str) -> bool:
        """Whether connections from `address` are refused."""
        return address in self.addresses

    def player_banned(self, player_id: str) -> bool:
        """Whether a player is banned (or closed)."""
        return player_id in self.players

    def check_token(self, session: Session, token: str) -> None:
        """Refuse a hello with the token of a banned (or closed) player: `BannedError`, and the connection is closed
        after the error."""
        self.check_player(session, player_of_token(token))

    def check_player(self, session: Session, player_id: str) -> None:
        """Refuse a hello as a banned (or closed) player, by token or by an account's session: `BannedError`, and the
        connection is closed after the error."""
        if player_id in self.players:
            asyncio.get_running_loop().call_soon(
                lambda: asyncio.ensure_future(session.ws.close(1008, "banned")))
            raise BannedError("this identity is banned by the server's operator")

    def _close_player(self, player_id: str) -> None:
        """Close every connection of a banned player on this node."""
        for session in list(self.arena.presence.sessions_of.get(player_id, ())):
            refuse(session, "this identity is banned by the server's operator")

    def _close_address(self, address: str) -> None:
        """Close every connection from a banned address on this node."""
        for session in list(self.sessions_from(address)):
            refuse(session, "your address is banned by the server's operator")

    # --- the operator's acts --------------------------------------------------------------------

    async def act(self, session: Session, msg: Moderate) -> Moderated:
        """Serve one moderation request (only with the operator token)."""
        if not self.operator.check(session.peer.address, msg.operator_token, "moderation"):
            raise NotOperatorError("moderation needs the server's operator token")
        actor = f"{msg.actor or session.name or 'operator'}@{session.remote_host}"
        if msg.act == "online":
            rows = await self.online(msg.limit)
            return Moderated(act=msg.act, done=f"{len(rows)} online", rows=rows)
        if msg.act == "bans":
            bans = await read_bans(self.arena.storage)
            rows = [ModerationRow(kind=b.kind, target=b.target, name=await self._name_of(b.kind, b.target),
                                  reason=b.reason, actor=b.actor, at=b.at) for b in bans[-msg.limit:]]
            return Moderated(act=msg.act, done=f"{len(bans)} bans", rows=rows)
        if msg.act == "audit":
            entries = await read_audit_recent(self.arena.storage, msg.limit)
            rows = [ModerationRow(kind=e.action, target=e.target, reason=e.reason, actor=e.actor, at=e.at)
                    for e in entries]
            return Moderated(act=msg.act, done=f"{len(rows)} acts", rows=rows)
        if not msg.reason.strip():
            raise BadFieldError("moderate.reason: say why (it is kept in the audit)")
        done = await self._change(msg, actor)
        log_event("moderated", act=msg.act, target=msg.target, actor=actor, reason=msg.reason)
        return Moderated(act=msg.act, done=done)

    async def _change(self, msg: Moderate, actor: str) -> str:
        """Carry out an act that changes something; what was done, in words."""
        if msg.act in ("ban", "unban") and msg.kind == "address":
            address = canonical_address(msg.target)
            return await self._ban(msg.act, "address", address, msg.reason, actor)
        if msg.act == "abort":
            return await self.abort(msg.target, msg.reason, actor)
        if msg.act in ("cancel_event", "hide_event", "show_event"):
            return await self.event_act(msg.act, msg.target.strip(), msg.reason, actor)
        player = await self.player(msg.target)
        pid = player.player_id
        if msg.act in ("ban", "unban"):
            return await self._ban(msg.act, "player", pid, msg.reason, actor)
        if msg.act == "rename":
            if msg.name is None:
                raise BadFieldError("moderate.name: the new name of the identity")
            return await self.rename(player, msg.name, msg.reason, actor)
        if msg.act == "reset":
            code = await self.arena.accounts.reset_code(pid, [op_audit(actor, "reset", pid, msg.reason)])
            return (f"reset code for {player.name} ({pid}): {code} (hand it over: it signs in once, with kalah login "
                    f"{player.name} --recovery-code or the web page's recovery sign-in, and sets a new password)")
        await self.arena.accounts.revoke(pid, None)  # an account's sessions end too
        await self.arena.identities.close(player, [op_ban("player", pid, f"closed: {msg.reason}", actor),
                                                   op_audit(actor, "close", pid, msg.reason)])
        self.players.add(pid)
        self._close_player(pid)
        self.on_bans()
        return f"closed {player.name} ({pid}): its token no longer says hello"

    async def _name_of(self, kind: str, target: str) -> str | None:
        """The name of a banned player (as stored now: a renamed player's new name); None for an address."""
        if kind != "player":
            return None
        player = await self.arena.storage.player(target)
        return None if player is None else player.name

    async def player(self, target: str) -> StoredPlayer:
        """The player a target names: an id, else a name; `BadFieldError` if none."""
        ids = self.arena.identities
        player = await ids.get(target) if target else None
        if player is None:
            owner = ids.owner(target) if target else None
            if owner is None and target:
                owner = await player_id_named(self.arena.storage, target)
            player = None if owner is None else await ids.get(owner)
        if player is None:
            raise BadFieldError(f"moderate.target: no player has the id or name {target!r}")
        return player

    async def _ban(self, act: str, kind: BanKind, target: str, reason: str, actor: str) -> str:
        """Store a ban or lift it, with its audit row; a ban closes the live connections here at once."""
        change = op_ban(kind, target, reason, actor) if act == "ban" else op_unban(kind, target)
        await self.arena.write([change, op_audit(actor, f"{act}_{kind}", target, reason)])
        held = self.players if kind == "player" else self.addresses
        if act == "unban":
            held.discard(target)
            return f"unbanned {kind} {target}"
        held.add(target)
        if kind == "player":
            self._close_player(target)
        else:
            self._close_address(target)
        self.on_bans()
        return f"banned {kind} {target}"

    async def abort(self, match_id: str, reason: str, actor: str) -> str:
        """End a live match as `aborted`: no winner, unrated, stored with its audit row."""
        a = self.arena
        room = await a.find_room(match_id)
        m = room.match
        async with room.lock:
            a.refuse_if_closing()
            if m.status == "open":
                raise NotStartedError("the match has not started: its creator can leave it")
            if m.status != "live":
                raise GameOverError("the match is over")
            await a.retry(room, lambda: m.prepare_abort() if m.status == "live" else None)
        await a.write([op_audit(actor, "abort", match_id, reason)])
        return f"aborted {match_id}: no winner, unrated"

    async def event_act(self, act: str, event_id: str, reason: str, actor: str) -> str:
        """Cancel an event; or hide it (cancelled if still open or running, then left out of every list and not
        found by `event`, on every node); or show a hidden one again. Audited."""
        if not event_id:
            raise BadFieldError(f"moderate.target: {act} needs an event id")
        if act == "show_event":
            await self.arena.write([op_unban("event", event_id), op_audit(actor, act, event_id, reason)])
            self.events.discard(event_id)
            return f"event {event_id} is listed again"
        if self.cancel_event is None:
            raise BadFieldError("moderate.act: this server runs no events")
        done = await self.cancel_event(event_id)
        if act == "cancel_event":
            await self.arena.write([op_audit(actor, act, event_id, reason)])
            return done
        await self.arena.write([op_ban("event", event_id, reason, actor), op_audit(actor, act, event_id, reason)])
        self.events.add(event_id)
        return f"{done}; hidden from every list"

    async def rename(self, player: StoredPlayer, name: str, reason: str, actor: str) -> str:
        """Give an identity a new name (refused if another holds it)."""
        audit = op_audit(actor, "rename", player.player_id, f"{player.name} -> {name}: {reason}")
        await self.arena.identities.rename(player, name, [audit])
        for session in self.arena.presence.sessions_of.get(player.player_id, ()):
            session.name = name
        return f"renamed {player.name} to {name} ({player.player_id})"

    async def online(self, limit: int) -> list[ModerationRow]:
        """Who is connected (in a cluster: to every live node), with their addresses and node (hello said)."""
        connected = sorted(await self.arena.presence.everyone(), key=lambda c: (c.node or "", c.player_id))
        rows = []
        for c in connected[:limit]:
            player = await self.arena.identities.get(c.player_id)
            rows.append(ModerationRow(kind="player", target=c.player_id, name=None if player is None else player.name,
                                      address=", ".join(c.addresses), node=c.node))
        return rows
