"""Game reviews for clients (`review` requests) and of every finished game, made once and stored with the game.

A review values each position of a finished game (`bots.review`) through the analysis queue
(`Analyst.aanalyse`), one position after the other, so it gets the queue's bounds and its fairness
across addresses and networks exactly as the asker's own analyses do; an address has at most
`MAX_MAKING_PER_ADDRESS` reviews being made at once, and more are refused with `too_many` (a
review's positions are not counted among the address's own analyses, so its page's analyses
go on beside it). Each position thinks an
equal share of `REVIEW_BUDGET_MS` (within `MIN_PLY_MS`..`MAX_PLY_MS`), so a game's cost is bounded.
The review is then stored (`reviews`) and every later request, on any node, reads it back. Two
requests for the same game while it is being made share the one review. A review being made is
sent when done, so the asker's connection serves its other requests meanwhile.

With `every_s`, the node also looks that often for games finished since it started (less
`LOOKBACK_S`) that have no review, claims one in `guards` for `lease_s` (so one node of a cluster
makes it; a claim left by a node that died mid-review lapses, and another node, or this one
restarted, takes the game over) and reviews it, one at a time, for no asker (charged to no address).
When no such game waits and the analysis queue is idle (nothing queued, no pressure), it makes
again a stored review holding estimates (made under pressure, each analysis cut short), claimed
the same way, at most `redos` times per game: its analyses are `low` in the queue (started only
when no request waits and the server is not under pressure), and the new review replaces the
stored one when it proves no fewer plies. One is made again at a time, beside the look for
games to review (which it never holds up, however long it waits for room).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from bots.review import MAX_PLY_MS, Valuation, assemble, needs_value, ply_budget_ms, replay
from protocol.errors import ConflictError, InPlayError, InternalError, KalahError, TooManyError, UnknownMatchError
from protocol.messages import Analyse, ErrorMessage, Message, encode
from protocol.review_messages import GameReview, ReviewGame
from protocol.variant import Variant
from server.core.played import PlayedHere
from server.edge.session import Peer, Session
from server.front.analysis import Analyst
from server.front.router import too_many_rows
from server.logs import event as log_event
from server.storage import Op, Storage, StoredGame
from server.storage.reviews import ESTIMATES, REVIEW, UNREVIEWED, op_review, op_review_redone, redo_claim, review_claim
from server.storage.writer import op_lease

LOOKBACK_S = 600.0
"""How long before its start a node still reviews finished games by itself."""
MAX_MAKING_PER_ADDRESS = 1
"""Reviews being made at once for one network address; more are refused with `too_many` (asking for a review being
made, or one stored, is not counted)."""
BUSY_RETRIES = 50
"""How many times a position's analysis waits out a `too_many` refusal (the asker's own analysis running, a full
queue) before the review gives up with that refusal."""
REVIEW_LEASE_S = 600.0
"""How long a node's claim on a game it reviews by itself holds (a review takes tens of seconds)."""
REDOS = 3
"""How many times at most a stored review with estimates is made again."""


class Reviews:
    """Answers `review` requests from the stored reviews, making the missing ones through the analysis queue."""

    def __init__(self, analyst: Analyst, storage: Storage, write: Callable[[list[Op]], Awaitable[None]],
                 played: PlayedHere, every_s: float | None = None, lease_s: float = REVIEW_LEASE_S,
                 redos: int = REDOS) -> None:
        self.analyst = analyst
        self.storage = storage
        """Where reviews and games are read."""
        self.write = write
        """The arena's one durable write (work in flight, refused while the server closes)."""
        self.played = played
        self.every_s = every_s
        """How often this node looks for finished games to review by itself (None: only on request)."""
        self.lease_s = lease_s
        """How long this node's claim on a game it reviews by itself holds."""
        self.redos = redos
        """How many times at most a stored review with estimates is made again."""
        self.made = 0
        """Reviews this node made (not read back) since it started."""
        self.redone = 0
        """Stored reviews with estimates this node made again since it started."""
        self._making: dict[str, asyncio.Future[GameReview]] = {}
        self._asked: dict[str, int] = {}
        """Reviews being made for each address."""
        self._since = time.time() - LOOKBACK_S
        self._redoing = False
        """Whether a stored review is being made again (one at a time)."""
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        """Reviews being made, and answers waiting for them."""

    def handlers(self) -> dict[type[Any], Callable[[Session, Any], Awaitable[list[Message]]]]:
        """The router's handler of the review request."""
        return {ReviewGame: self.review}

    async def review(self, s: Session, msg: ReviewGame) -> list[Message]:
        """The stored review of a finished game; else it is made (or joined, if being made) and sent when done, the
        connection serving its other requests meanwhile (refused at once for a game not over, or past the address's
        bound)."""
        if not s.peer.reads.allow(1):
            raise too_many_rows(1, s.peer.reads.wait_s(1))
        stored = await self.stored(msg.match_id)
        if stored is not None:
            return [stored]
        future = self._making.get(msg.match_id)
        if future is None:
            game = await self.storage.fetch_game(msg.match_id)
            if game is None:
                raise UnknownMatchError(f"no stored game {msg.match_id!r}")
            if game.status in ("open", "live"):
                raise InPlayError(f"match {msg.match_id} is still being played: ask for its review once it has "
                                  "ended")
            if game.status != "finished":
                raise UnknownMatchError(f"match {msg.match_id} was {game.status}: there is no game to review")
            await self.played.played(s.player_id)
            future = self._making.get(msg.match_id) or self.start_review(
                game, s.peer, lambda: self.played.known(s.player_id))
        self._spawn(self._deliver(s, msg.match_id, future))
        return []

    async def _deliver(self, s: Session, match_id: str, future: asyncio.Future[GameReview]) -> None:
        """Send `s` the review once made, or why it could not be."""
        try:
            s.send(await asyncio.shield(future))
        except Exception as exc:  # logged where the review failed, unless it is a refusal
            error = exc if isinstance(exc, KalahError) else InternalError("the review could not be made")
            s.send(ErrorMessage(code=error.code, message=str(error)[:1000], request="review", match_id=match_id,
                                retry_ms=error.retry_ms))

    async def stored(self, match_id: str) -> GameReview | None:
        """The review stored for a match, or None (also for a row this version cannot read)."""
        rows = await self.storage.fetch_rows(REVIEW, match_id)
        if not rows:
            return None
        try:
            return GameReview.model_validate_json(str(rows[0][0]))
        except ValueError as exc:
            log_event("unreadable_review", match=match_id, error=str(exc)[:300], level=30)
            return None

    def start_review(self, game: StoredGame, peer: Peer | None,
                     player: Callable[[], bool]) -> asyncio.Future[GameReview]:
        """Start making the review of a finished game (charged to `peer`'s address and network); its future.

        At most `MAX_MAKING_PER_ADDRESS` are made at once for one address: past it `too_many`. A review started is
        made to its end even if the asker leaves (its cost is bounded, and it is stored for the next)."""
        address = None if peer is None else peer.address
        if address is not None and self._asked.get(address, 0) >= MAX_MAKING_PER_ADDRESS:
            raise TooManyError(f"at most {MAX_MAKING_PER_ADDRESS} review made at once for one address: ask again "
                               "once it is done", MAX_PLY_MS / 1000)
        future: asyncio.Future[GameReview] = asyncio.get_running_loop().create_future()
        self._making[game.match_id] = future
        if address is not None:
            self._asked[address] = self._asked.get(address, 0) + 1

        async def make() -> None:
            """Make it, hand it to whoever waits, and free its places."""
            try:
                future.set_result(await self._make(game, peer, player))
            except Exception as exc:
                if not isinstance(exc, KalahError):
                    log_event("review_failed", match=game.match_id, error=repr(exc)[:300], level=40)
                future.set_exception(exc)
                future.exception()  # retrieved: no one may be waiting
            finally:
                del self._making[game.match_id]
                if address is not None:
                    self._asked[address] -= 1
                    if not self._asked[address]:
                        del self._asked[address]
                if not future.done():
                    future.cancel()

        self._spawn(make())
        return future

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task this object cancels when it closes."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _make(self, game: StoredGame, peer: Peer | None, player: Callable[[], bool]) -> GameReview:
        """Value each position through the analysis queue, then assemble and store the review."""
        started = time.monotonic()
        review = await self._assess(game, peer, player)
        await self.write([op_review(game.match_id, encode(review), review.exact)])
        self.made += 1
        log_event("game_reviewed", match=game.match_id, plies=len(review.plies), exact=review.exact,
                  seconds=round(time.monotonic() - started, 3))
        return review

    async def _assess(self, game: StoredGame, peer: Peer | None, player: Callable[[], bool],
                      low: bool = False) -> GameReview:
        """The review of a finished game, each position valued in turn through the analysis queue (`low`: only
        when nothing else waits there)."""
        variant = Variant.parse(game.variant)
        played = replay(variant, game.record)
        budget = ply_budget_ms(played)
        values: dict[int, Valuation] = {}
        for index, position in enumerate(played.positions):
            if needs_value(position):
                values[index] = await self._value(Analyse(variant=game.variant, position=position.fen(),
                                                          budget_ms=budget), peer, player, low)
        return assemble(game.match_id, played, (game.south, game.north), values, budget)

    async def _value(self, msg: Analyse, peer: Peer | None, player: Callable[[], bool],
                     low: bool = False) -> Valuation:
        """One position's valuation from the analysis queue, waiting out its `too_many` refusals a while."""
        for attempt in range(BUSY_RETRIES + 1):
            try:
                answer = await self.analyst.aanalyse(msg, peer, None, player, counted=False, low=low)
            except TooManyError as exc:
                if attempt == BUSY_RETRIES:
                    raise
                await asyncio.sleep((exc.retry_ms or 1000) / 1000)
                continue
            if answer is None:
                raise AssertionError("an analysis with no one to leave is always answered")
            return Valuation(answer.value, tuple(str(b) for b in answer.best), answer.exact, answer.depth)
        raise AssertionError("unreachable")

    def start(self) -> None:
        """Start looking for finished games to review, if `every_s` is set."""
        if self.every_s is not None and self._task is None:
            self._task = asyncio.create_task(self._watch(self.every_s), name="reviews")

    async def _watch(self, every_s: float) -> None:
        """Review, one at a time, the games finished lately that no node has reviewed or holds a claim on; when there
        is none and the analysis queue is idle, make again a stored review with estimates."""
        while True:
            await asyncio.sleep(every_s)
            try:
                waiting = await self.storage.fetch_rows(UNREVIEWED, self._since, time.time(), 1)
                for (match_id,) in waiting:
                    await self._review_alone(str(match_id))
                if not waiting and self.redos > 0 and not self._redoing and self.idle():
                    for match_id, redone in await self.storage.fetch_rows(ESTIMATES, self.redos, time.time(), 1):
                        self._redoing = True  # one at a time, beside this loop (it may wait long for room)
                        self._spawn(self._redo(str(match_id), int(redone)))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database failing, a refusal: look again later
                log_event("review_failed", error=str(exc)[:300], level=30)

    def idle(self) -> bool:
        """Whether the analysis queue has room for work no one waits for: nothing queued or running, no pressure."""
        return self.analyst.pending == 0 and not self.analyst.pressure()

    async def _review_alone(self, match_id: str) -> None:
        """Claim (for `lease_s`) and review one finished game for no asker."""
        try:
            await self.write(op_lease(review_claim(match_id), self.lease_s))
        except ConflictError:
            return  # another node holds a claim on it
        game = await self.storage.fetch_game(match_id)
        if game is not None and match_id not in self._making:
            await asyncio.shield(self.start_review(game, None, lambda: False))

    async def _redo(self, match_id: str, redone: int) -> None:
        """Make again a stored review with estimates (`_remake`), logging why it could not be."""
        try:
            await self._remake(match_id, redone)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database failing, a refusal: look again later
            log_event("review_failed", match=match_id, error=str(exc)[:300], level=30)
        finally:
            self._redoing = False

    async def _remake(self, match_id: str, redone: int) -> None:
        """Claim (for `lease_s`) and make again a stored review with estimates (made `redone` times before) at low
        priority; store it if it proves no fewer plies, and count the attempt either way."""
        try:
            await self.write(op_lease(redo_claim(match_id), self.lease_s))
        except ConflictError:
            return  # another node is making it again
        game = await self.storage.fetch_game(match_id)
        old = await self.stored(match_id)
        if game is None or match_id in self._making:
            return
        started = time.monotonic()
        review = await self._assess(game, None, lambda: False, low=True)
        better = old is None or proved(review) >= proved(old)
        await self.write([op_review_redone(match_id, redone, encode(review), review.exact, better)])
        self.redone += 1
        log_event("review_redone", match=match_id, exact=review.exact, kept=better, proved=proved(review),
                  seconds=round(time.monotonic() - started, 3))

    async def close(self) -> None:
        """Stop looking for games to review, and making them."""
        tasks = [*self._tasks, *([] if self._task is None else [self._task])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def proved(review: GameReview) -> int:
    """How many of a review's judged plies are proved."""
    return sum(p.exact for p in review.plies if p.mark != "unjudged")
