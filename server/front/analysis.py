"""Position analysis for clients (the replay screen's solver values), off the event loop.

An analysis is what the `perfect` bot knows of the position (`PerfectPlayer.best_sowing`): the
books of proved positions, else a proof with the endgame databases on disk (mapped, so the
bots' and the analyst's engines share their pages), else the deepest search finished within
the budget. It is `exact` whenever a book or a proof gave the value, and its `depth` is then -1.

Analyses are the cheapest work to retry, so while the server is under pressure (`Analyst.pressure`:
its event loop ran late lately, or a hosted bot thinks a move for a person) the one analysis thread
is paced: it rests after each analysis so that it uses at most `busy` of a core (`player_busy` for
players), and each analysis then thinks at most `PRESSED_BUDGET_MS`. Waiting analyses keep their
places in the queue; its bounds alone refuse.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from protocol.actions import Sow
from protocol.errors import NotationError, TooManyError
from protocol.messages import Analyse, Analysis
from protocol.position import Position
from protocol.variant import Variant
from server.core.hosted import lower_priority
from server.core.networks import prefix_of
from server.edge.session import Peer
from server.logs import event as log_event

MAX_ENGINES = 4
MAX_QUEUED = 16
"""Analyses queued or running for the whole server; more are refused with `too_many`."""
CROWDED_BUDGET_MS = 1000
"""The most an analysis may think while other analyses wait, so a queue of them drains quickly."""
MAX_PER_ADDRESS = 1
"""Analyses queued or running for one network address (so a few addresses cannot fill the queue)."""
USAGE_HALF_LIFE_S = 60.0
"""How fast the record of an address's or a network's analysis time fades (what the fair queue orders by)."""
MAX_SERVED_IDENTITIES = 20_000
"""Identities remembered as served an analysis (the longest ago forgotten first: one forgotten counts as new)."""
MAX_NETWORKS = 10_000
"""Networks whose analysis time is remembered; past it those whose record faded below `FORGOTTEN_S` are dropped,
then the longest unserved (the records that stay above it number at most about 8,700: one thread's time, fading)."""
FORGOTTEN_S = 0.01
BUSY = 0.25
"""Under pressure, the share of a core the analysis thread may use for fresh identities' analyses (`analysis_busy`)."""
PLAYER_BUSY = 0.5
"""Under pressure, the share of a core for the analyses of identities that played here (`analysis_player_busy`)."""
PRESSED_BUDGET_MS = 250
"""The most an analysis started under pressure may think, so it holds a core only briefly."""
PACE_STEP_S = 0.05
"""How often a paced analysis looks again whether the pressure is gone or its rest is over."""
SHARE_WINDOW_S = 10.0
"""The window over which `Analyst.share` (the thread's share of a core, in /health) is taken."""


class _Used(Protocol):
    """A record of analysis time used lately: an address's `Peer`, or a network's `_NetworkUse`."""

    analysis_used: float
    analysis_at: float


@dataclass
class _NetworkUse:
    """The analysis time a network prefix (an IPv4 /24, an IPv6 /64) used lately, and the last turn in which it was
    served, for players and for fresh identities."""

    analysis_used: float = 0.0
    analysis_at: float = 0.0
    served_turn: dict[bool, int] = field(default_factory=dict)
    """Kind (a player's or not) -> the turn of that kind's queue in which an analysis of this network last started."""


@dataclass
class _Ticket:
    """One analysis request waiting or running."""

    msg: Analyse
    peer: Peer | None
    network: str
    done: asyncio.Future[Analysis]
    order: int
    player: Callable[[], bool]
    """Whether the asker has played here (`server.core.played`), asked again whenever the queue is ordered (a game
    may reach its tenth ply while the request waits): players are served before fresh identities."""
    paced: bool = False
    """Whether it waited for the analysis thread's pace (counted once in `Analyst.paced`)."""
    who: str | None = None
    """The asker's identity (None: not known, e.g. a game review's): one never served an analysis comes first."""
    low: bool = False
    """Work for no one waiting (a review with estimates made again): started only when no other request waits and
    the server is not under pressure, and the first refused when the queue is full."""


@dataclass(frozen=True)
class Run:
    """One analysis the thread ran: when (monotonic seconds), the CPU seconds its thread used, and for whom."""

    started: float
    ended: float
    cpu: float
    player: bool


def _usage(record: _Used | None, now: float) -> float:
    """The analysis seconds `record` used lately, as of `now` (halved every `USAGE_HALF_LIFE_S`)."""
    if record is None:
        return 0.0
    return float(record.analysis_used * 0.5 ** ((now - record.analysis_at) / USAGE_HALF_LIFE_S))


def _charge(record: _Used, seconds: float, now: float) -> None:
    """Add `seconds` of analysis to `record`."""
    record.analysis_used = _usage(record, now) + seconds
    record.analysis_at = now


def network_of(peer: Peer | None) -> str:
    """The network prefix `peer`'s address counts in (`""` without a peer)."""
    if peer is None:
        return ""
    return peer.network or prefix_of(peer.address)


class Analyst:
    """Keeps a few search engines (one per variant) and answers `analyse` requests within a budget."""

    def __init__(self, max_queued: int = MAX_QUEUED, max_per_address: int = MAX_PER_ADDRESS,
                 max_networks: int = MAX_NETWORKS, busy: float = BUSY, player_busy: float = PLAYER_BUSY,
                 pressure: Callable[[], bool] = lambda: False) -> None:
        self.max_queued = max_queued
        self.busy = busy
        self.player_busy = player_busy
        self.pressure = pressure
        """Whether the server is under pressure (its loop ran late lately, or a bot thinks a move for a person):
        then analyses start only within the thread's busy share, each thinking at most `PRESSED_BUDGET_MS`."""
        self.runs: deque[Run] = deque(maxlen=256)
        """The analyses run lately, the last one last."""
        self.paced = 0
        """Analyses that waited for the pace since the start."""
        self._pacing = False
        self._timer: asyncio.TimerHandle | None = None
        self.max_per_address = max_per_address
        self.max_networks = max_networks
        self.pending = 0
        self._waiting: list[_Ticket] = []
        self.networks: dict[str, _NetworkUse] = {}
        """Each network's analysis time lately, the least recently charged first (at most `max_networks`)."""
        self.served_identities: OrderedDict[str, None] = OrderedDict()
        """Identities that were served an analysis, the most recent last (at most `MAX_SERVED_IDENTITIES`)."""
        self.turns = {True: 0, False: 0}
        """Kind (a player's or not) -> its queue's turn: each network has one analysis of that kind started per turn,
        and a turn ends when every waiting request of the kind is of a network already served in it."""
        self._running = False
        self._order = itertools.count()
        self._player: Any = None
        self._guard = threading.Lock()
        # one core at most, below the event loop and the bots of games with a person
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="analysis", initializer=lower_priority)

    def _analyst(self) -> Any:
        """The perfect bot that analyses, made on first use with engines of its own (at most `MAX_ENGINES` tables)."""
        from bots.core import table_bytes  # the bots are optional for everything else the server does
        from bots.engines import Engines
        from bots.players import MAX_BOT_TT_LOG2, PerfectPlayer

        with self._guard:
            if self._player is None:
                tables = MAX_ENGINES * table_bytes("c", MAX_BOT_TT_LOG2["c"])
                self._player = PerfectPlayer(engines=Engines(max_table_bytes=tables))
            return self._player

    def _decide(self, position: Position, budget_s: float) -> tuple[list[int], int, bool, int]:
        """(best bins, South's value, exact, depth) of a sowing position within `budget_s`."""
        decision = self._analyst().best_sowing(position, time.monotonic() + budget_s)
        action = decision.action
        best = [action.bin] if isinstance(action, Sow) else []
        value = int(position.margin) if decision.value is None else decision.value
        return best, value, decision.exact, -1 if decision.exact else decision.depth

    def analyse(self, msg: Analyse, budget_ms: int | None = None) -> Analysis:
        """South's store minus North's at the end under the best play found, and the best move (thinking at most
        `budget_ms`, else the request's budget, or `CROWDED_BUDGET_MS` while others wait)."""
        variant = Variant.parse(msg.variant)
        position = Position.from_fen(variant, msg.position).check_possible()
        if position.over:
            return Analysis(position=msg.position, value=int(position.margin), best=[], exact=True, depth=0)
        if position.transfer_pending or not position.legal_bins():
            raise NotationError("only positions where a side sows can be analysed")
        if budget_ms is None:
            budget_ms = msg.budget_ms if self.pending <= 1 else min(msg.budget_ms, CROWDED_BUDGET_MS)
        best, value, exact, depth = self._decide(position, budget_ms / 1000)
        return Analysis(position=msg.position, value=value, best=best, exact=exact, depth=max(-1, depth))

    async def aanalyse(self, msg: Analyse, peer: Peer | None = None,
                       gone: Callable[[], Awaitable[object]] | None = None,
                       player: Callable[[], bool] = lambda: False, who: str | None = None,
                       counted: bool = True, low: bool = False) -> Analysis | None:
        """`analyse` in the analysis thread (the C search releases the GIL), within the queue's bounds.

        At most `max_queued` analyses wait or run, `max_per_address` of them for one `peer` (unless not
        `counted`: a game review's positions, bounded by `server.front.reviews` instead). The
        queue serves players (`player()`: the asker has played a game here) before fresh identities,
        and within each kind new people (`who`, an identity never served an analysis) before the
        others; then it goes by networks (an IPv4 /24, an IPv6 /64) in turns: each network has one
        analysis of the kind started per turn, the one whose last was the longest ago in turns
        first, so no network has a second before every network waiting had one; then by the
        analysis time the network used lately, then its address. When the queue is full a newcomer
        that weighs less than some waiting request by that order (a player, a new person, a network
        behind in turns, one that used less) takes the place of the heaviest (refused with
        `too_many` and a retry hint), else it is refused. So many addresses of one network count as
        one network, many networks cannot keep a new person or one who played here waiting, and
        identities made for a flood cannot starve one who played here. A `low` request (work no one waits
        for) starts only when no other request waits and the server is not under pressure, and is the
        first refused when the queue is full. If `gone()` (the
        connection's closing) completes first, a queued analysis is dropped and one already
        running is left to end within its budget (the answer is then None: no one to send it to).
        """
        if counted and peer is not None and peer.analyses >= self.max_per_address:
            raise TooManyError(f"at most {self.max_per_address} analyses at once from one address",
                               CROWDED_BUDGET_MS / 1000)
        loop = asyncio.get_running_loop()
        ticket = _Ticket(msg, peer, network_of(peer), loop.create_future(), next(self._order), player, who=who,
                         low=low)
        if self.pending >= self.max_queued:
            self._make_room(ticket)
        self._waiting.append(ticket)
        self.pending += 1
        if counted and peer is not None:
            peer.analyses += 1
        self._dispatch()
        try:
            if gone is None:
                return await ticket.done
            closed: asyncio.Future[Any] = asyncio.ensure_future(gone())
            waiting: set[asyncio.Future[Any]] = {ticket.done, closed}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            if ticket.done not in done:
                return None
            return ticket.done.result()
        finally:
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            if not ticket.done.done():
                ticket.done.cancel()  # no one waits for the answer any more
            self.pending -= 1
            if counted and peer is not None:
                peer.analyses -= 1

    def _weight(self, ticket: _Ticket, now: float) -> tuple[bool, bool, int, float, float]:
        """What the fair queue orders by: a player first; then, of its kind, an identity never served an analysis
        (a new person); then the network whose last analysis of that kind started in the earliest turn (-1: none
        remembered), so every network waiting has one analysis before any has a second; then the analysis seconds
        the ticket's network used lately, then its address."""
        player = ticket.player()
        record = self.networks.get(ticket.network)
        turn = -1 if record is None else record.served_turn.get(player, -1)
        known = ticket.who is None or ticket.who in self.served_identities
        return not player, known, turn, _usage(record, now), _usage(ticket.peer, now)

    def _take_turn(self, ticket: _Ticket, player: bool, served: bool) -> None:
        """An analysis of the ticket's network starts: mark its network served in the current turn of its kind
        (starting the next turn first if `served`: every network of its kind waiting was served in this one)."""
        if served:
            self.turns[player] += 1
        if ticket.who is not None:
            self.served_identities[ticket.who] = None
            self.served_identities.move_to_end(ticket.who)
            if len(self.served_identities) > MAX_SERVED_IDENTITIES:
                self.served_identities.popitem(last=False)
        record = self.networks.get(ticket.network)
        if record is None:
            record = self.networks[ticket.network] = _NetworkUse()
        record.served_turn[player] = self.turns[player]

    def _make_room(self, ticket: _Ticket) -> None:
        """The queue is full: refuse a waiting `low` request (work no one waits for), else the waiting request of a
        fresh identity (else of a player) of the network that used the most analysis time lately (of its addresses,
        the one that used the most) if it weighs more than `ticket` (not queued yet), else raise `too_many` (always for
        a `low` ticket)."""
        now = time.monotonic()
        mine = self._weight(ticket, now)
        heaviest = max(self._waiting, key=lambda t: (t.low, *self._weight(t, now), t.order), default=None)
        if heaviest is None or (not heaviest.low and self._weight(heaviest, now) <= mine) or ticket.low:
            raise TooManyError(f"the analysis queue is full ({self.max_queued}): try again shortly",
                               CROWDED_BUDGET_MS / 1000)
        self._waiting.remove(heaviest)
        heaviest.done.set_exception(TooManyError("the analysis queue is full and others asked less lately or "
                                                 "played here: try again shortly",
                                                 self.max_queued * CROWDED_BUDGET_MS / 1000))

    def _charge(self, ticket: _Ticket, seconds: float) -> None:
        """Add `seconds` of analysis to the ticket's address and network (forgetting faded networks past the bound)."""
        if ticket.peer is None:
            return
        now = time.monotonic()
        _charge(ticket.peer, seconds, now)
        record = self.networks.pop(ticket.network, None) or _NetworkUse()
        _charge(record, seconds, now)
        self.networks[ticket.network] = record  # the most recently charged last
        if len(self.networks) > self.max_networks:
            self.networks = {network: used for network, used in self.networks.items()
                             if _usage(used, now) >= FORGOTTEN_S}
            while len(self.networks) > self.max_networks:
                del self.networks[next(iter(self.networks))]

    def _dispatch(self) -> None:
        """Start the waiting analysis of the least busy network's least busy address (a player's first), if the
        thread is free and, under pressure, its pace allows (else look again shortly)."""
        if self._running or not self._waiting or self._timer is not None:
            return
        now = time.monotonic()
        pressed = self.pressure()
        asked = [t for t in self._waiting if not t.low]
        if not asked and pressed:  # work no one waits for waits for the pressure to pass
            self._timer = asyncio.get_running_loop().call_later(PACE_STEP_S, self._resume)
            return
        weights = [(*self._weight(t, now), t.order, t) for t in asked or self._waiting]
        fresh, *_, ticket = min(weights, key=lambda w: w[:6])
        player = not fresh
        served = all(w[2] >= self.turns[player] for w in weights if w[0] == fresh)  # none of its kind due this turn
        if pressed and (wait := self.rest(player) - now) > 0:
            if not ticket.paced:
                ticket.paced = True
                self.paced += 1
            if not self._pacing:
                self._pacing = True
                log_event("analyses_paced", waiting=len(self._waiting), share=round(self.share(now), 3))
            self._timer = asyncio.get_running_loop().call_later(min(wait, PACE_STEP_S), self._resume)
            return
        self._pacing = pressed and self._pacing
        self._waiting.remove(ticket)
        self._take_turn(ticket, player, served)
        self._running = True
        budget_ms = ticket.msg.budget_ms if self.pending <= 1 else min(ticket.msg.budget_ms, CROWDED_BUDGET_MS)
        if pressed:
            budget_ms = min(budget_ms, PRESSED_BUDGET_MS)
        spent: list[float] = []
        started = time.monotonic()
        work = asyncio.get_running_loop().run_in_executor(self._pool, self._timed, ticket.msg, budget_ms, spent)

        def finished(work: asyncio.Future[Analysis]) -> None:
            """Hand the answer over, charge the address and its network for the time, start the next one."""
            self._running = False
            ended = time.monotonic()
            self.runs.append(Run(started, ended, sum(spent), player))
            self._charge(ticket, ended - started)
            if not ticket.done.done():
                if work.cancelled():
                    ticket.done.cancel()
                elif (exc := work.exception()) is not None:
                    ticket.done.set_exception(exc)
                else:
                    ticket.done.set_result(work.result())
            self._dispatch()

        work.add_done_callback(finished)

    def _timed(self, msg: Analyse, budget_ms: int, spent: list[float]) -> Analysis:
        """`analyse` in the analysis thread, adding the CPU seconds the thread used to `spent`."""
        cpu = time.thread_time()
        try:
            return self.analyse(msg, budget_ms)
        finally:
            spent.append(time.thread_time() - cpu)

    def _resume(self) -> None:
        """A paced analysis looks again."""
        self._timer = None
        self._dispatch()

    def rest(self, player: bool) -> float:
        """The monotonic time before which, under pressure, the next analysis (a player's if `player`) waits: the
        last one's CPU time `c` is followed by a rest of `c * (1 / busy - 1)`, so the thread uses at most `busy`
        of a core (`player_busy` for players) however many wait. `c` counts at most `PRESSED_BUDGET_MS` (what an
        analysis started under pressure may think), so one started before the pressure holds the next back no longer."""
        if not self.runs:
            return 0.0
        last = self.runs[-1]
        busy = min(1.0, max(0.01, self.player_busy if player else self.busy))
        return last.ended + min(last.cpu, PRESSED_BUDGET_MS / 1000) * (1 / busy - 1)

    def share(self, now: float | None = None, window: float = SHARE_WINDOW_S) -> float:
        """The share of a core the analysis thread used over the last `window` seconds (of the runs ended in it)."""
        since = (time.monotonic() if now is None else now) - window
        return sum(run.cpu for run in self.runs if run.ended > since) / window

    def close(self) -> None:
        """Stop the analysis thread once its queued requests are done."""
        if self._timer is not None:
            self._timer.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
