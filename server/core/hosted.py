"""Hosted bots: `bots/` players run by the server in worker threads, within the clock, humans first.

`BotRunner.choose` hands one `Player.decide` call to a worker thread (one thread hop per
move) and awaits it. Moves of matches with a human seat (`Priority.HUMAN`) go ahead of
exhibition moves (`Priority.EXHIBITION`, bot against bot), and `reserved` extra workers take
human moves only, so a flood of exhibitions never makes a human wait for a bot's thread. A
move's budget counts from the request: a move that waited in the queue thinks for what is
left. Exhibition moves queue up to `max_queued`; beyond that a move waits (its clock running) until
one of them is taken, in turn; for any bot that fails or is late, the move is a random legal one.

Players are cached by canonical bot id (`bots.names`): a spelling that is not canonical is
refused with `unknown_bot` before anything is made. Their engines live in one `Engines` pool,
bounded in estimated bytes (`engine_bytes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import os
import random
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import IntEnum
from time import monotonic
from typing import Protocol, runtime_checkable

from bots.core import Player
from bots.engines import DEFAULT_MAX_BYTES, DEFAULT_MAX_TABLE_BYTES, HOSTED_THREADS, Engines
from bots.names import bot_id_shape, canonical_bot
from bots.players import Decision, make_player
from protocol.actions import Action
from protocol.position import Position
from protocol.variant import TimeControl
from server.core.errors import UnknownBotError

__all__ = ["BotRunner", "Chosen", "Player", "PlayerFactory", "Priority", "budget"]

BACKGROUND_NICE = 10
"""How much lower the OS schedules threads that may search for exhibitions or analyses than the event loop and
the thread kept for games with a person (Linux sets niceness per thread).

Not lower: such a thread also holds the interpreter's lock now and then (between searches), and the lower
it is, the longer it waits for a core while holding it when a thread of the server's own priority (a
person's bot searching in C) or another process has the core, and the event loop waits with it. At 19
lower, or in the idle scheduling class, analyses beside four CPU-bound processes served too few to pass
test_adversarial_analyses (they did at 10); the idle class also stopped exhibitions altogether."""


def lower_priority(nice: int = BACKGROUND_NICE) -> None:
    """Lower the calling thread's OS scheduling priority by `nice`, where the OS allows it (else nothing)."""
    with contextlib.suppress(AttributeError, OSError):  # not every OS has per-thread priorities
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)

PlayerFactory = Callable[[str], Player]
"""Makes the player of a (canonical) bot id; raises for an id it does not know."""

DEFAULT_BUDGET_S = 1.0
MIN_THINK_S = 0.01
MAX_PLAYERS = 64


@runtime_checkable
class Explaining(Protocol):
    """A player that says how it found its action (`PerfectPlayer.explain`): proved or not, and from what."""

    def explain(self, position: Position, budget_s: float) -> Decision:
        """The decision for a position and how it was reached."""
        ...


@dataclass(frozen=True)
class Chosen:
    """A hosted bot's action and, for a bot that explains its moves (`perfect`: `explains`), its decision; `late` when
    the bot failed or ran out of time and the action is a random legal one (no decision then)."""

    action: Action
    decision: Decision | None = None
    late: bool = False
    explains: bool = False


class Priority(IntEnum):
    """Whose move a bot is thinking about: lower goes first."""

    HUMAN = 0
    """A match with a human seat: a person is waiting."""
    EXHIBITION = 1
    """A match between hosted bots only."""


def budget(control: TimeControl | None, left_ms: int) -> float:
    """Seconds a bot may think with `left_ms` on its clock, keeping a safety margin."""
    if control is None:
        return DEFAULT_BUDGET_S
    if control.per_move_ms:
        return max(MIN_THINK_S, min(DEFAULT_BUDGET_S, control.per_move_ms / 1000 * 0.5))
    share = left_ms / 1000 / 30 + control.increment_ms / 1000 * 0.5
    return max(MIN_THINK_S, min(DEFAULT_BUDGET_S, share, left_ms / 1000 * 0.5))


@dataclass(order=True)
class _Job:
    """One decision waiting for a worker: ordered by priority, then by arrival."""

    priority: Priority
    seq: int
    player: Player = field(compare=False)
    position: Position = field(compare=False)
    deadline: float = field(compare=False)
    future: Future[Chosen] = field(compare=False)

    def run(self, finished: Callable[[], None]) -> None:
        """Decide with the time left before the deadline, unless the caller gave up waiting; `finished` is called
        before the caller can learn the outcome (so the worker counts as free before the caller asks again)."""
        if not self.future.set_running_or_notify_cancel():
            finished()
            return
        try:
            left = max(MIN_THINK_S, self.deadline - monotonic())
            if isinstance(self.player, Explaining):
                decision = self.player.explain(self.position, left)
                chosen = Chosen(decision.action, decision, explains=True)
            else:
                chosen = Chosen(self.player.decide(self.position, left))
        except BaseException as exc:
            finished()
            self.future.set_exception(exc)
        else:
            finished()
            self.future.set_result(chosen)


def _nothing() -> None:
    """No bookkeeping when a general worker finishes a job."""


class _Workers:
    """Worker threads over one priority queue; the reserved ones take human moves only."""

    def __init__(self, general: int, reserved: int) -> None:
        self._sizes = (max(1, general), max(0, reserved))
        self._cond = threading.Condition()
        self._heap: list[_Job] = []
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._idle_reserved = 0
        """Reserved workers not running a job (a human move is theirs while one is free)."""
        self.queued_exhibition = 0

    def submit(self, job: _Job) -> None:
        """Queue a job (threads start on the first one)."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the bot runner is closed")
            if not self._threads:
                general, reserved = self._sizes
                self._idle_reserved = reserved
                for i in range(general + reserved):
                    t = threading.Thread(target=self._work, args=(i >= general,), daemon=True,
                                         name=f"hosted-bot-{'human' if i >= general else 'any'}-{i}")
                    self._threads.append(t)
                    t.start()
            heapq.heappush(self._heap, job)
            self.queued_exhibition += job.priority == Priority.EXHIBITION
            self._cond.notify_all()

    def _next(self, human_only: bool) -> _Job | None:
        """The next job this worker may take, waiting for one; None once closed. A human move goes to an idle
        reserved worker when there is one (it runs at the higher priority), a general worker taking it only when
        every reserved one is busy."""
        with self._cond:
            while not self._closed:
                if self._heap:
                    human = self._heap[0].priority == Priority.HUMAN
                    if human if human_only else not human or not self._idle_reserved:
                        job = heapq.heappop(self._heap)
                        self.queued_exhibition -= job.priority == Priority.EXHIBITION
                        self._idle_reserved -= human_only
                        if self._heap:
                            self._cond.notify_all()  # the next job may be another worker's to take
                        return job
                self._cond.wait()
            return None

    def _work(self, human_only: bool) -> None:
        """A worker's loop (a worker that may take exhibitions runs at a lower OS priority)."""
        if not human_only:
            lower_priority()
        while (job := self._next(human_only)) is not None:
            job.run(self._reserved_freed if human_only else _nothing)

    def _reserved_freed(self) -> None:
        """A reserved worker is done with its job: the next human move is its again."""
        with self._cond:
            self._idle_reserved += 1

    def close(self) -> None:
        """Cancel queued jobs and let the threads end (a running search finishes on its own)."""
        with self._cond:
            self._closed = True
            for job in self._heap:
                job.future.cancel()
            self._heap.clear()
            self.queued_exhibition = 0
            self._cond.notify_all()

    @property
    def queued(self) -> int:
        """Decisions waiting for a worker."""
        with self._cond:
            return len(self._heap)


async def _outcome(future: Future[Chosen], timeout: float) -> Chosen | None:
    """The worker's action, None if it failed or is not done within `timeout` s (then it is cancelled, if queued).

    The worker's result resumes the caller two turns of the event loop after it is posted (one sets it, the next
    runs the caller; `asyncio.wait_for` over `asyncio.wrap_future` takes three on Python 3.11): under a flood
    each turn is long.
    """
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[Chosen | None] = loop.create_future()

    def settle(done: Future[Chosen]) -> None:
        """In the loop: the waiter gets the action, or None (failed, cancelled)."""
        if not waiter.done():
            waiter.set_result(None if done.cancelled() or done.exception() is not None else done.result())

    def done_in_worker(done: Future[Chosen]) -> None:
        """In the worker thread (or the loop, if already done): hand the outcome to the loop."""
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, done)

    def late() -> None:
        """The time is up: no action."""
        if not waiter.done():
            waiter.set_result(None)

    timer = loop.call_later(timeout, late)
    future.add_done_callback(done_in_worker)
    try:
        return await waiter
    finally:
        timer.cancel()
        future.cancel()  # late or abandoned: a job not yet started never runs (a running one finishes on its own)


class BotRunner:
    """Runs hosted bots' decisions in worker threads, never on the server's event loop.

    `workers` threads take any move, humans' first; `reserved` more take human moves only.
    With no `factory`, bots are `bots.players` by canonical id, their engines bounded by
    `engine_bytes`; a custom factory (stand-in bots) gets any id of the canonical shape.
    """

    def __init__(self, factory: PlayerFactory | None = None, workers: int = 2, *, reserved: int = 1,
                 max_queued: int = 64, engine_bytes: int = DEFAULT_MAX_BYTES,
                 table_bytes: int = DEFAULT_MAX_TABLE_BYTES,
                 canonical: Callable[[str], str] | None = None) -> None:
        self.engines = Engines(engine_bytes, max_table_bytes=table_bytes, threads=HOSTED_THREADS)
        self.factory = factory or self._make_player
        self.canonical = canonical or (bot_id_shape if factory is not None else canonical_bot)
        self.max_queued = max_queued
        self.fallbacks = 0
        self.thinking_for_people = 0
        """Moves of matches with a human seat being decided now (the analysis thread is paced meanwhile)."""
        self._players: OrderedDict[str, Player] = OrderedDict()
        self._guard = threading.Lock()
        self._workers = _Workers(workers, reserved)
        self._seq = itertools.count()
        self._behind: deque[asyncio.Future[None]] = deque()
        """Exhibition moves waiting for room in the queue, first come first served."""
        self.waited = 0
        """Exhibition moves that waited for room in the queue (since the start)."""

    def _make_player(self, bot_id: str) -> Player:
        """A `bots.players` player sharing this runner's engines."""
        return make_player(bot_id, self.engines)

    def check(self, name: str) -> str:
        """The canonical id of a bot this server can run (store that one); else `UnknownBotError`."""
        bot_id, _ = self._player(name)
        return bot_id

    def _player(self, name: str) -> tuple[str, Player]:
        """(canonical id, player) of a bot name, the player made once per id and kept (LRU)."""
        bot_id = self.canonical(name)  # raises BotNameError, an UnknownBotError
        with self._guard:
            player = self._players.pop(bot_id, None)
            if player is None:
                try:
                    player = self.factory(bot_id)
                except UnknownBotError:
                    raise
                except Exception as exc:
                    raise UnknownBotError(f"unknown bot {bot_id!r}: {exc}") from None
            self._players[bot_id] = player
            while len(self._players) > MAX_PLAYERS:
                self._players.popitem(last=False)
        return bot_id, player

    async def choose(self, name: str, position: Position, budget_s: float, *,
                     priority: Priority = Priority.HUMAN) -> Action:
        """The bot's action within about `budget_s` from now; a random legal one if it fails or is late.

        `priority` says whose move it is: `Priority.EXHIBITION` when no seat of the match is human; such a move
        waits for room while `max_queued` of them are queued (a bot that is behind waits: it never plays at random
        for want of a worker).
        """
        return (await self.choose_explained(name, position, budget_s, priority=priority)).action

    async def choose_explained(self, name: str, position: Position, budget_s: float, *,
                               priority: Priority = Priority.HUMAN) -> Chosen:
        """`choose`, with the bot's decision when it explains its moves (`perfect`) and whether the move is a random
        one because the bot failed or was late."""
        _, player = self._player(name)
        legal = position.legal_actions()
        exhibition = priority == Priority.EXHIBITION
        if exhibition:
            await self._room()
        future: Future[Chosen] = Future()
        job = _Job(priority, next(self._seq), player, position, monotonic() + budget_s, future)
        self._workers.submit(job)
        people = priority == Priority.HUMAN
        self.thinking_for_people += people
        try:
            chosen = await _outcome(future, budget_s * 1.5 + 0.5)
        finally:
            self.thinking_for_people -= people
            if exhibition:
                self._wake()
        if chosen is not None and chosen.action in legal:
            return chosen
        self.fallbacks += 1
        return Chosen(random.choice(legal), None, late=True, explains=isinstance(player, Explaining))

    async def _room(self) -> None:
        """Wait, in turn, until fewer than `max_queued` exhibition moves are queued (at once if none waits)."""
        if not self._behind and self._workers.queued_exhibition < self.max_queued:
            return
        self.waited += 1
        head = False
        while True:
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            if head:  # woken and overtaken: first again
                self._behind.appendleft(turn)
            else:
                self._behind.append(turn)
            try:
                await turn
            except BaseException:
                self._wake()  # a turn this move was given goes on to the next
                raise
            if self._workers.queued_exhibition < self.max_queued:
                return
            head = True

    def _wake(self) -> None:
        """An exhibition move was decided: the first one waiting for room goes on."""
        while self._behind:
            turn = self._behind.popleft()
            if not turn.done():
                turn.set_result(None)
                return

    @property
    def queued(self) -> int:
        """Decisions waiting for a worker (not yet started)."""
        return self._workers.queued

    def cached_ids(self) -> list[str]:
        """The ids of the players kept, least recently used first."""
        with self._guard:
            return list(self._players)

    def nbytes(self) -> int:
        """Estimated memory of the hosted bots' engines (tables and databases)."""
        return self.engines.nbytes()

    def close(self) -> None:
        """Stop the worker threads (a running search is left to finish on its own)."""
        self._workers.close()
