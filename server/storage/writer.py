"""The storage interface every backend implements: the group-committing writer, the reads a restart needs, and
the statements of matches and players.

A write is a list of `Op`s (`server.storage.ops`). `Storage.write(ops)` queues
the statements of one change and returns once they are committed: the caller acknowledges or
broadcasts only then. A single writer task drains everything queued into one transaction, so
many matches share one commit; a failing item is retried alone so it cannot sink the others,
and a key stored twice (a match id or a (match, ply) taken) fails as `ConflictError` on every
backend.
"""

from __future__ import annotations

import asyncio
import time
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import KalahError, UnavailableError
from protocol.names import name_key
from protocol.outcome import EndReason
from server.logs import event as log_event
from server.storage.games import GameReads
from server.storage.ops import Op, OpKind

Pending = tuple[list[Op], "asyncio.Future[None]"]
"""One queued write: its statements and the future its writer waits on."""


MAX_BATCH = 2000
RETRY_S = 1.0
"""The retry hint of a change the database could not store."""


def unavailable(error: BaseException) -> UnavailableError:
    """The typed refusal of a change the database failed to store (disk full, connection lost, ...)."""
    reason = "its disk is full" if "full" in str(error).lower() else type(error).__name__
    return UnavailableError(f"the database could not store this change ({reason}): nothing was stored; "
                            "try again shortly", RETRY_S)


@dataclass(frozen=True, slots=True)
class StoredPlayer:
    """A player row: id, name, token hash (None for bots), bot name."""

    player_id: str
    name: str
    token_hash: str | None
    bot: str | None


@dataclass(slots=True)
class StoredMatch:
    """An unfinished match as stored: enough to rebuild it after a restart."""

    match_id: str
    variant: str
    rated: bool
    seats: tuple[str | None, str | None]
    creator_seat: int
    actions: list[tuple[int, int, str, int, int]] = field(default_factory=list)
    """(ply, seat, action token, seat0 ms, seat1 ms) in ply order."""
    status: str = "live"
    end: tuple[int | None, int | None, EndReason] | None = None
    """(result, winner seat, reason) of a finished match."""
    last_at: float | None = None
    """When the last action was stored, by the database's clock (UNIX time): where a running clock started."""
    read_at: float | None = None
    """When the match was read, by the same clock (None: not known)."""

    def idle_s(self) -> float | None:
        """Seconds from the last action's storing to the read, both by the database's clock (so no node's clock, nor
        a step of it, comes in), never below zero; None without an action or a read time."""
        if self.last_at is None or self.read_at is None:
            return None
        return max(0.0, self.read_at - self.last_at)


class Storage(GameReads):
    """The arena's database: the group-committing writer, the reads a restart needs, and stored-game reads."""

    where: str
    """The database, for logs and messages (a URL without its password)."""

    def __init__(self) -> None:
        self._pending: list[Pending] = []
        """Writes queued for the next group commit, in the order they came."""
        self._wake: asyncio.Future[None] | None = None
        """What the idle writer waits on (set by the next write, or by `close`)."""
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.commits = 0
        self.items = 0
        self.commit_seconds = 0.0
        self.on_commit: Callable[[float], object] = lambda seconds: None
        """Told the seconds of each group commit (the server's metrics)."""

    def start_writer(self) -> None:
        """Start the task that drains queued writes into group commits."""
        self._task = asyncio.create_task(self._writer(), name="storage-writer")

    async def write(self, ops: list[Op]) -> None:
        """Commit `ops` in one transaction (shared with other writers); raises on failure."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((ops, fut))
        self._wake_writer()
        await fut

    def _wake_writer(self) -> None:
        """Let the idle writer run (a list and one future: cheaper per write than an `asyncio.Queue`)."""
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    @abstractmethod
    async def commit_batch(self, items: list[list[Op]]) -> list[BaseException | None]:
        """Commit every item, all in one transaction if they can be, else each alone: one outcome per item.

        A key stored twice is reported as `ConflictError`; an item's outcome is None once committed.
        """

    async def _writer(self) -> None:
        """Drain the queued writes into group commits (at most `MAX_BATCH` writes each) until closed and drained."""
        loop = asyncio.get_running_loop()
        while True:
            if not self._pending:
                if self._closing:
                    return
                self._wake = loop.create_future()
                await self._wake
                self._wake = None
                continue
            batch = self._pending[:MAX_BATCH]
            del self._pending[:MAX_BATCH]
            await self.commit_and_settle(batch)

    async def commit_and_settle(self, batch: list[Pending]) -> None:
        """Commit one batch (`commit_batch`) and settle its writers (`settle`); a backend may settle them sooner."""
        started = time.perf_counter()
        try:
            results = await self.commit_batch([ops for ops, _ in batch])
        except Exception as exc:  # the connection itself failed: fail every waiter
            results = [exc] * len(batch)
        self.settle(batch, results, time.perf_counter() - started)

    def settle(self, batch: list[Pending], results: list[BaseException | None], elapsed: float) -> None:
        """Count a finished commit of `elapsed` seconds and wake each writer of the batch with its outcome."""
        self.commit_seconds += elapsed
        self.on_commit(elapsed)
        self.commits += 1
        self.items += len(batch)
        if any(error is not None and not isinstance(error, KalahError) for error in results):
            log_event("storage_unavailable", level=40,
                      error=next(repr(e) for e in results if e is not None and not isinstance(e, KalahError)))
        for (_, fut), error in zip(batch, results, strict=True):
            if fut.done():
                continue
            if error is None:
                fut.set_result(None)
            else:
                fut.set_exception(error if isinstance(error, KalahError) else unavailable(error))

    async def close(self) -> None:
        """Finish every queued write, then close the database."""
        if self._task is not None:
            self._closing = True
            self._wake_writer()
            await self._task
            self._task = None
        await self.disconnect()

    @abstractmethod
    async def disconnect(self) -> None:
        """Close the database connections (the writer has finished)."""

    # --- reads for start-up ----------------------------------------------------------------

    @abstractmethod
    async def players(self, limit: int) -> list[StoredPlayer]:
        """The `limit` stored players made last, oldest first."""

    @abstractmethod
    async def unfinished(self) -> list[StoredMatch]:
        """Every open or live match with its actions, oldest first."""

    @abstractmethod
    async def stored_match(self, match_id: str) -> StoredMatch | None:
        """One match of any status with its actions and end, or None."""

    @abstractmethod
    async def quarantined(self) -> int:
        """How many matches are set aside as unreadable."""

    @abstractmethod
    async def ratings(self) -> dict[str, tuple[float, float, float, int]]:
        """Every player's Glicko-2 rating, deviation, volatility and number of rated games."""

    @abstractmethod
    async def player(self, player_id: str) -> StoredPlayer | None:
        """One stored player, or None (another node may have stored it since this one started)."""

    @abstractmethod
    async def seated(self, player_id: str) -> list[str]:
        """The ids of the open or live matches where `player_id` holds a seat, oldest first."""

    @abstractmethod
    async def fetch_rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of one read (`?` placeholders, the same SQL on every backend), on the read connections."""

    @abstractmethod
    async def store_id(self) -> str:
        """The database's random identity (made with its schema; the same for every node on it)."""


# --- the reads for start-up, the same SQL on every backend (`?` placeholders) ----------------

PLAYERS = "SELECT id, name, token_hash, bot FROM players ORDER BY created_at DESC, id DESC LIMIT ?"
"""The `?` players made last, newest first (read by the index on players' creation, not the whole table)."""
UNFINISHED = ("SELECT id, variant, rated, seat0, seat1, creator_seat FROM matches"
              " WHERE status IN ('open', 'live') ORDER BY created_at")
UNFINISHED_ACTIONS = ("SELECT a.match_id, a.ply, a.seat, a.action, a.seat0_ms, a.seat1_ms, a.at FROM actions a"
                      " JOIN matches m ON m.id = a.match_id WHERE m.status IN ('open', 'live')"
                      " ORDER BY a.match_id, a.ply")
MATCH = ("SELECT id, variant, rated, seat0, seat1, creator_seat, status, result, winner_seat, reason, {now}"
         " FROM matches WHERE id = ?")
"""One match; `{now}` is the backend's clock (its `NOW`), which the actions' times are stored by."""
MATCH_ACTIONS = "SELECT ply, seat, action, seat0_ms, seat1_ms, at FROM actions WHERE match_id = ? ORDER BY ply"
PLAYER = "SELECT id, name, token_hash, bot FROM players WHERE id = ?"
SEATED = ("SELECT id FROM matches WHERE status IN ('open', 'live') AND (seat0 = ? OR seat1 = ?)"
          " ORDER BY created_at")
QUARANTINED = "SELECT count(*) FROM quarantine"
RATINGS = "SELECT player_id, rating, rd, volatility, games FROM ratings"
STORE_ID = "SELECT id FROM store"


def unfinished_of(rows: list[Any], actions: list[Any]) -> list[StoredMatch]:
    """Unfinished matches from rows of `UNFINISHED` and `UNFINISHED_ACTIONS`."""
    found = {r[0]: StoredMatch(r[0], r[1], bool(r[2]), (r[3], r[4]), r[5]) for r in rows}
    for a in actions:
        if a[0] in found:
            found[a[0]].actions.append((a[1], a[2], a[3], a[4], a[5]))
            found[a[0]].last_at = a[6]
    return list(found.values())


def match_of(row: Any, actions: list[Any]) -> StoredMatch:
    """A match of any status from a row of `MATCH` and its rows of `MATCH_ACTIONS`."""
    r = row
    found = StoredMatch(r[0], r[1], bool(r[2]), (r[3], r[4]), r[5], status=r[6],
                        end=None if r[9] is None else (r[7], r[8], EndReason(r[9])))
    found.actions = [(a[0], a[1], a[2], a[3], a[4]) for a in actions]
    found.last_at = actions[-1][5] if actions else None
    found.read_at = float(r[10])
    return found


# --- statements ------------------------------------------------------------------------


def op_player(player_id: str, name: str, token_hash: str | None, bot: str | None = None) -> Op:
    """Store a new player under its name's canonical form, which no other player may hold (`ConflictError`);
    a row already stored under the id (a hosted bot's) is kept as it is."""
    return (OpKind.PLAYER, (player_id, name, name_key(name), token_hash, bot, time.time()))


def op_create(match_id: str, variant: str, rated: bool, creator_seat: int,
              creator: tuple[str, str] | None = None) -> Op:
    """Store a new open match, with the network (IPv4 /24, IPv6 /64) and the address of its creator if a client
    opened it to anyone (kept while it is open: the lobby's fair order)."""
    network, address = creator or (None, None)
    return (OpKind.CREATE, (match_id, variant, bool(rated), creator_seat, time.time(), network, address))


def op_join(match_id: str, seat: int, player_id: str, live: bool) -> Op:
    """Store a player taking a seat (and the match going live)."""
    return (OpKind.JOIN, (seat, player_id, "live" if live else "open", match_id))


def op_action(match_id: str, ply: int, seat: int, token: str, clocks_ms: tuple[int, int]) -> Op:
    """Store one action; (match, ply) is unique, so an action is never stored twice."""
    return (OpKind.ACTION, (match_id, ply, seat, token, clocks_ms[0], clocks_ms[1]))  # its time: the database's clock


def op_finish(match_id: str, result: int | None, winner_seat: int | None, reason: EndReason) -> Op:
    """Store the end of a match."""
    return (OpKind.FINISH, (result, winner_seat, str(reason), time.time(), match_id))


def op_cancel(match_id: str) -> Op:
    """Mark an open match its creator left before anyone joined."""
    return (OpKind.CANCEL, (time.time(), match_id))


def op_rating(player_id: str, rating: float, rd: float, volatility: float, games: int) -> Op:
    """Store a player's Glicko-2 rating after a rated game (the later of two updates wins)."""
    return (OpKind.RATING, (player_id, rating, rd, volatility, games))


def op_quarantine(match_id: str, reason: str) -> list[Op]:
    """Set aside a match that cannot be loaded: noted with the reason, and never loaded again."""
    return [(OpKind.QUARANTINE, (match_id, reason[:1000], time.time())), (OpKind.SET_ASIDE, (match_id,))]


def op_forfeit(match_id: str, seat: int, player_id: str, detail: str) -> Op:
    """Store why the player in `seat` forfeits (stored with the end of the match it causes)."""
    return (OpKind.FORFEIT, (match_id, seat, player_id, detail[:1000], time.time()))


def op_guard(key: str, expires_at: float | None = None) -> Op:
    """Claim `key` once: a second write claiming it fails as `ConflictError` (nodes racing on one change); with
    `expires_at` (UNIX seconds), a claim that `op_lease` may take over from then on."""
    return (OpKind.GUARD, (key, expires_at))


RACE_S = 3600.0
"""How long a claim that only settles a race between nodes is kept (a recovery code's use, a passkey's counter or
ceremony: the record it is written with refuses any later use by itself)."""


def race_claim(key: str, now: float | None = None) -> Op:
    """Claim `key` once while a race on it can still run: `op_guard` lapsing `RACE_S` from now (swept after)."""
    return op_guard(key, (time.time() if now is None else now) + RACE_S)


def op_guard_sweep(now: float | None = None) -> Op:
    """Delete every claim whose time has passed (claims kept for good stay)."""
    return (OpKind.GUARD_SWEEP, (time.time() if now is None else now,))


def op_lease(key: str, seconds: float, now: float | None = None) -> list[Op]:
    """Claim `key` for `seconds`: fails as `ConflictError` while another claim of it holds, and takes over one whose
    time has passed (a claimer that died or gave up), so of two racing takers one wins."""
    at = time.time() if now is None else now
    return [(OpKind.GUARD_LAPSED, (key, at)), op_guard(key, at + seconds)]


def op_own(match_id: str, node: str) -> Op:
    """Make `node` the owner of a match (its clocks, hosted bots and expiry)."""
    return (OpKind.OWN, (match_id, node))


def op_disown(match_id: str) -> Op:
    """Forget the owner of a match that ended or was cancelled."""
    return (OpKind.DISOWN, (match_id,))
