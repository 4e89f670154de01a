"""One match, sans I/O: seats, rules, clocks, numbered events. No socket, no SQL, no clock source.

Every change is two steps so the server can make it durable before anyone sees it:
`prepare_*` validates and returns a change value (raising a typed error if refused), the
caller stores it, then `commit(change)` advances the state and returns the new events.
`play` does both at once for callers that need no storage.

Seats are players: seat 0 opened as South, seat 1 as North. After a pie-rule swap the
seats exchange sides, so `side_of(seat)` is `seat ^ swapped`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from protocol.actions import Action
from protocol.errors import GameOverError
from protocol.events import (
    AnyMatchEvent,
    CatchUp,
    GameOverEvent,
    JoinedEvent,
    MatchEvent,
    decode_event,
)
from protocol.events import Clocks as WireClocks
from protocol.game import Game
from protocol.messages import Ack, MatchSummary, Snapshot, encode
from protocol.outcome import EndReason, winner_of
from protocol.position import MoveEvent, Position, Side
from protocol.variant import Variant
from server.core.clocks import Clocks
from server.core.errors import (
    AlreadySeatedError,
    ClaimRefusedError,
    FuturePlyError,
    MatchFullError,
    NotSeatedError,
    NotStartedError,
    StalePlyError,
    TimeOutError,
)

Status = Literal["open", "live", "finished"]
SIDE_NAMES: tuple[Literal["south"], Literal["north"]] = ("south", "north")
SIDES = (Side.SOUTH, Side.NORTH)
"""The sides by number (a tuple look-up: calling the enum costs more on every action)."""


@dataclass(frozen=True, slots=True)
class Seat:
    """A player in a seat: id, display name, and the hosted bot's name if it is one."""

    player_id: str
    name: str
    bot: str | None = None


@dataclass(frozen=True, slots=True)
class JoinChange:
    """A player takes a seat."""

    seat: int
    player: Seat


@dataclass(frozen=True, slots=True)
class EndChange:
    """The game ends: reason, winning seat (None: draw), and South minus North if the board decided it."""

    reason: EndReason
    winner: int | None
    result: int | None = None
    detail: str | None = None
    """Why the loser forfeited (stored with the end; not kept in the match's events)."""


@dataclass(frozen=True, slots=True)
class ActionChange:
    """An accepted action at `ply` by `seat`, with both clocks after it and the end it causes."""

    seat: int
    action: Action
    ply: int
    clocks_ms: tuple[int, int]
    at: float
    end: EndChange | None = None
    after: tuple[Position, MoveEvent] | None = field(default=None, compare=False, repr=False)
    """The position and move event `prepare_action` computed (reused when positions cannot repeat)."""


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A resent action already stored at `ply`: acknowledge it again with its event number."""

    ply: int
    seq: int


Change = JoinChange | EndChange | ActionChange

CATCH_UP_BYTES = 64 * 1024
"""Missed events longer than this (encoded) are answered with a snapshot, which is shorter."""


class Match:
    """A match: the game, its two seats, clocks, and its numbered event log."""

    def __init__(self, match_id: str, variant: Variant, now: Callable[[], float],
                 rated: bool = True, grace_s: float = 60.0, idle_s: float | None = None) -> None:
        self.match_id = match_id
        self.variant = variant
        self.now = now
        self.rated = rated
        self.grace_s = grace_s
        """How long an opponent may be away (no connection) before the other side may claim."""
        self.idle_s = idle_s
        """In an untimed match: how long the side to move may make no move before the other may claim."""
        self.game = Game(variant)
        self.seats: list[Seat | None] = [None, None]
        self.clocks = Clocks(variant.time_control)
        self.live_since: float | None = None
        self.last_action_at: float | None = None
        self._log: list[str] = []
        """Every event, encoded: plain strings keep the garbage collector's work small."""
        self.end: EndChange | None = None
        self._action_seq: dict[int, int] = {}
        self._ack_head: str | None = None
        self._event_head = f'{{"type":"event","match_id":{json.dumps(match_id)},"seq":'
        """The start of every event's text (an action's is written out directly, the others by their models)."""
        self._status: Status = "open"
        """Kept as seats are taken and the match ends (read several times an action, so not worked out each time)."""

    # --- queries ----------------------------------------------------------------------

    @property
    def status(self) -> Status:
        """`finished` once ended, `live` once both seats are taken, else `open`."""
        return self._status

    @property
    def position(self) -> Position:
        """The current position."""
        return self.game.position

    @property
    def ply(self) -> int:
        """Number of actions played."""
        return self.game.ply

    @property
    def seq(self) -> int:
        """Number of the last event (0: none yet)."""
        return len(self._log)

    def side_of(self, seat: int) -> Side:
        """The side a seat plays now (seats exchange sides after a swap)."""
        return SIDES[seat ^ self.position.swapped]

    def seat_of_side(self, side: Side) -> int:
        """The seat playing `side` now."""
        return int(side) ^ int(self.position.swapped)

    def seat_of(self, player_id: str) -> int | None:
        """The seat `player_id` holds here, or None."""
        for i, s in enumerate(self.seats):
            if s is not None and s.player_id == player_id:
                return i
        return None

    def player_on(self, side: Side) -> Seat | None:
        """Who plays `side` now."""
        return self.seats[self.seat_of_side(side)]

    def seat_to_move(self) -> int | None:
        """The seat whose turn it is, or None when not live."""
        return self.seat_of_side(self.position.to_move) if self.status == "live" else None

    def deadline(self) -> float | None:
        """When the running clock's flag falls (in the injected time), or None."""
        return self.clocks.deadline() if self.status == "live" else None

    def wire_clocks(self, now: float | None = None) -> WireClocks | None:
        """Both clocks as of `now` (default: the time now), by side, for the wire (None: untimed)."""
        if not self.clocks.enabled:
            return None
        now = self.now() if now is None else now
        south, north = self.seat_of_side(Side.SOUTH), self.seat_of_side(Side.NORTH)
        running = self.clocks.running
        return WireClocks(south_ms=self.clocks.left(south, now), north_ms=self.clocks.left(north, now),
                          running=None if running is None else SIDE_NAMES[self.side_of(running)])

    def catch_up_text(self, since: int | None, you: int | None = None, spectators: int = 0) -> str:
        """`catch_up`, encoded: the logged events' texts are joined as they are, not decoded again."""
        missed = self._log[since:] if since is not None and since <= len(self._log) else None
        if missed is None or sum(map(len, missed)) > CATCH_UP_BYTES:
            return encode(self.snapshot(you, spectators))
        head = encode(CatchUp(match_id=self.match_id, seq=self.seq))
        assert head.endswith('"events":[]}')
        return f"{head[:-2]}{','.join(missed)}]}}"

    def catch_up(self, since: int | None, you: int | None = None, spectators: int = 0) -> CatchUp | Snapshot:
        """The answer to watch or sync: the events after `since` (maybe none), else a snapshot.

        A snapshot answers when `since` is None or unknown, or when the missed events are long.
        """
        missed = self._log[since:] if since is not None and since <= len(self._log) else None
        if missed is None or sum(map(len, missed)) > CATCH_UP_BYTES:
            return self.snapshot(you, spectators)
        return CatchUp(match_id=self.match_id, seq=self.seq, events=[decode_event(text) for text in missed])

    def ack_text(self, ply: int, seq: int) -> bytes:
        """The text of `Ack(match_id, ply, seq)`, the reply to every action, from a head encoded once per match."""
        head = self._ack_head
        if head is None:
            full = encode(Ack(match_id=self.match_id, ply=0, seq=0))
            head = self._ack_head = full[:full.index('"ply":') + 6]
        return f'{head}{ply},"seq":{seq},"duplicate":false}}'.encode()

    def logged_texts(self, count: int) -> list[bytes]:
        """The wire text of the last `count` events this match logged (encoded once, when logged), to send as they
        are."""
        log = self._log
        return [text.encode() for text in log[len(log) - count:]] if count else []

    @property
    def events(self) -> list[AnyMatchEvent]:
        """Every event so far, in order (decoded from the log)."""
        return [decode_event(text) for text in self._log]

    def snapshot(self, you: int | None = None, spectators: int = 0) -> Snapshot:
        """The whole state as of the last event, seen by seat `you` (None: a spectator)."""
        south, north = self.player_on(Side.SOUTH), self.player_on(Side.NORTH)
        end = self.end
        return Snapshot(
            match_id=self.match_id, seq=self.seq, variant=self.variant.text(),
            south=south.name if south else None, north=north.name if north else None,
            you=None if you is None else SIDE_NAMES[self.side_of(you)], status=self.status,
            record=[a.token() for a in self.game.actions], position=self.position.fen(),
            clocks=self.wire_clocks() or WireClocks(), spectators=spectators,
            result=end.result if end else None, reason=end.reason if end else None,
            winner=self._winner_side(end))

    def summary(self, spectators: int = 0) -> MatchSummary:
        """One line of the lobby listing."""
        south, north = self.player_on(Side.SOUTH), self.player_on(Side.NORTH)
        return MatchSummary(match_id=self.match_id, variant=self.variant.text(),
                            south=south.name if south else None, north=north.name if north else None,
                            status=self.status, ply=self.ply, spectators=spectators,
                            result=self.end.result if self.end else None)

    # --- preparing changes ----------------------------------------------------------

    def prepare_join(self, player: Seat, seat: int | None = None) -> JoinChange:
        """Seat `player` (in `seat`, or the open one); raises if full or already seated (a hosted bot
        may take both seats: it can play itself)."""
        if player.bot is None and self.seat_of(player.player_id) is not None:
            raise AlreadySeatedError("you already hold a seat in this match")
        if self.status != "open":
            raise MatchFullError("this match has no open seat")
        free = [i for i, s in enumerate(self.seats) if s is None]
        if seat is None:
            seat = free[0]
        if seat not in free:
            raise MatchFullError("that seat is taken")
        return JoinChange(seat, player)

    def _check_seat(self, seat: int) -> None:
        """Refuse unless `seat` is a taken seat of this match."""
        if seat not in (0, 1) or self.seats[seat] is None:
            raise NotSeatedError("you hold no seat in this match")

    def _check_live(self, seat: int) -> None:
        """Refuse unless `seat` is a real seat of the match and the match is live."""
        self._check_seat(seat)
        self._check_started()

    def _check_started(self) -> None:
        """Refuse unless the match is live (started and not over)."""
        if self.status == "open":
            raise NotStartedError("the match waits for a second player")
        if self.status == "finished":
            raise GameOverError(f"the game is over ({self.end.reason if self.end else 'finished'})")

    def prepare_action(self, seat: int, action: Action, ply: int) -> ActionChange | Duplicate:
        """Validate `action` by `seat` at `ply`; raises a typed error, or names a duplicate."""
        self._check_seat(seat)
        if ply < self.ply:
            past = self.game.events[ply]
            if past.action == action and self._seat_at(ply) == seat:
                return Duplicate(ply, self._action_seq[ply])
            raise StalePlyError(f"ply {ply} was already played ({past.action.token()}), now at {self.ply}")
        self._check_started()
        if ply > self.ply:
            raise FuturePlyError(f"ply {ply} is ahead of the game, which is at ply {self.ply}")
        now = self.now()
        if self.clocks.expired(now) is not None:
            raise TimeOutError("your time has run out")
        pos, move = self.game.preview(action, self.side_of(seat))
        end = None if pos.end is None else self._score_end(pos)
        return ActionChange(seat, action, ply, self.clocks.after_action(seat, now), now, end, (pos, move))

    def _seat_at(self, ply: int) -> int:
        """The seat that played the action at `ply` (sides are mapped with the swap state then)."""
        before = self.game.positions[ply]
        return int(self.game.events[ply].side) ^ int(before.swapped)

    def _score_end(self, pos: Position) -> EndChange:
        """The end of a game decided on the board (`pos` is over): the margin names the winner."""
        assert pos.end is not None
        result = pos.margin
        winner = winner_of(result)
        seat = None if winner is None else int(winner) ^ int(pos.swapped)
        return EndChange(pos.end, seat, result)

    def prepare_resign(self, seat: int) -> EndChange:
        """`seat` resigns; the other seat wins."""
        self._check_live(seat)
        return EndChange(EndReason.RESIGN, 1 - seat)

    def prepare_forfeit(self, seat: int, detail: str) -> EndChange:
        """`seat` forfeits (an outside engine that broke its protocol or left), `detail` saying why; the other wins."""
        self._check_live(seat)
        return EndChange(EndReason.FORFEIT, 1 - seat, detail=detail)

    def prepare_abort(self) -> EndChange:
        """The operator ends the live match: no winner, and unrated once committed."""
        self._check_started()
        return EndChange(EndReason.ABORTED, None)

    def unrates(self, end: EndChange) -> bool:
        """Whether `end` leaves the match unrated: the operator's abort, or a resignation before the first move
        (lichess aborts such a game; here it stays a resignation, with its winner, but moves no rating)."""
        return end.reason is EndReason.ABORTED or (end.reason is EndReason.RESIGN and self.ply == 0)

    def rates(self, end: EndChange) -> bool:
        """Whether `end` moves the players' ratings: the match is rated and `end` does not unrate it."""
        return self.rated and not self.unrates(end)

    def prepare_flag(self) -> EndChange | None:
        """The end on time if the running clock has run out now, else None."""
        if self.status != "live":
            return None
        loser = self.clocks.expired(self.now())
        return None if loser is None else EndChange(EndReason.TIME, 1 - loser)

    def prepare_claim(self, seat: int, opponent_away_since: float | None) -> EndChange:
        """`seat` claims the win by abandonment: the opponent has had no connection for the grace
        period (counted from when the match went live at the earliest), or, in an untimed match,
        has been to move without moving for the no-move limit (connected or not)."""
        self._check_live(seat)
        now = self.now()
        waits = []
        if opponent_away_since is not None:
            since = max(opponent_away_since, self.live_since or opponent_away_since)
            waits.append(since + self.grace_s - now)
        if self.idle_s is not None and not self.clocks.enabled and self.seat_to_move() == 1 - seat:
            waits.append((self.last_action_at or self.live_since or now) + self.idle_s - now)
        if not waits:
            raise ClaimRefusedError("your opponent is connected" if opponent_away_since is None
                                    else "your opponent may still come back")
        if min(waits) > 0:
            why = "may still come back" if opponent_away_since is not None else "is connected and may still move"
            raise ClaimRefusedError(f"your opponent {why}: claim in {min(waits):.1f} s")
        return EndChange(EndReason.ABANDONMENT, seat)

    # --- committing changes -----------------------------------------------------------

    def commit(self, change: Change) -> list[AnyMatchEvent]:
        """Apply a prepared (and stored) change; returns the new events."""
        count = self.commit_logged(change)
        return [decode_event(text) for text in self._log[len(self._log) - count:]] if count else []

    def commit_logged(self, change: Change) -> int:
        """Apply a prepared (and stored) change, its events logged as text and not returned as values (what the
        server sends: `logged_texts`); how many it logged."""
        if isinstance(change, ActionChange):
            return self._commit_action(change)
        if isinstance(change, JoinChange):
            return self._commit_join(change)
        return self._commit_end(change)

    def play(self, seat: int, action: Action, ply: int) -> list[AnyMatchEvent]:
        """Prepare and commit an action at once (no storage); a duplicate gives no events."""
        change = self.prepare_action(seat, action, ply)
        return [] if isinstance(change, Duplicate) else self.commit(change)

    def _log_event(self, event: MatchEvent) -> None:
        """Append an event built with the next number (`seq + 1`) to the log."""
        assert event.seq == len(self._log) + 1
        self._log.append(encode(event))

    def _commit_join(self, change: JoinChange) -> int:
        """Seat a player; the match goes live (clocks start) when both seats are taken."""
        self.seats[change.seat] = change.player
        clocks = None
        if all(self.seats):
            if self.end is None:
                self._status = "live"
            now = self.now()
            self.live_since = now
            self.clocks.start(self.seat_of_side(self.position.to_move), now)
            clocks = self.wire_clocks(now)
        event = JoinedEvent(match_id=self.match_id, seq=self.seq + 1, side=SIDE_NAMES[self.side_of(change.seat)],
                            player=change.player.name, clocks=clocks)
        self._log_event(event)
        return 1

    def _commit_action(self, change: ActionChange) -> int:
        """Play the action, move the clocks on, and end the game if it ended on the board."""
        game = self.game
        if change.after is not None and change.ply == game.ply and change.after[0].ply == game.ply + 1:
            pos, mv = change.after
            game.push(change.action, pos, mv)
        else:
            mv = game.play(change.action, self.side_of(change.seat))
            pos = game.position
        nxt = None if pos.over or change.end else self.seat_of_side(pos.to_move)
        self.clocks.apply(change.clocks_ms, nxt, change.at)
        self.last_action_at = change.at
        seq = len(self._log) + 1
        self._log.append(self._action_text(seq, change.ply, mv, change.action.token(), pos.fen(), change.at))
        self._action_seq[change.ply] = seq
        return 1 if change.end is None else 1 + self._commit_end(change.end)

    def _action_text(self, seq: int, ply: int, mv: MoveEvent, token: str, fen: str, at: float) -> str:
        """The text of an action event, byte for byte what `encode(ActionEvent(...))` gives, written out directly:
        one is made for every action, and building and serialising the model cost more than the rest of the commit.
        Every value is the server's own (a token, a position, numbers), so none needs escaping."""
        capture = "null" if mv.capture is None else f'{{"bin":{mv.capture[0] + 1},"seeds":{mv.capture[1]}}}'
        return (f'{self._event_head}{seq},"kind":"action","ply":{ply},"side":"{SIDE_NAMES[mv.side]}",'
                f'"action":"{token}","path":[{",".join(map(str, mv.path))}],"capture":{capture},'
                f'"extra_turn":{"true" if mv.extra_turn else "false"},"position":"{fen}",'
                f'"clocks":{self._clocks_text(at)}}}')

    def _clocks_text(self, now: float) -> str:
        """`wire_clocks(now)` as JSON text (`null`: untimed)."""
        clocks = self.clocks
        if not clocks.enabled:
            return "null"
        south, north = self.seat_of_side(Side.SOUTH), self.seat_of_side(Side.NORTH)
        running = "null" if clocks.running is None else f'"{SIDE_NAMES[self.side_of(clocks.running)]}"'
        return f'{{"south_ms":{clocks.left(south, now)},"north_ms":{clocks.left(north, now)},"running":{running}}}'

    def _winner_side(self, end: EndChange | None) -> Literal["south", "north"] | None:
        """The side the winning seat plays at the end."""
        if end is None or end.winner is None:
            return None
        return SIDE_NAMES[self.side_of(end.winner)]

    def _commit_end(self, change: EndChange) -> int:
        """Finish the match (an aborted one, or one resigned before the first move, unrated)."""
        if self.status == "finished":
            return 0
        self.clocks.stop()
        if change.reason is EndReason.TIME and change.winner is not None:
            self.clocks.left_ms[1 - change.winner] = 0
        self.end = change
        self._status = "finished"
        if self.unrates(change):
            self.rated = False
        winner = None if change.winner is None else self.seats[change.winner]
        event = GameOverEvent(match_id=self.match_id, seq=self.seq + 1, reason=change.reason, result=change.result,
                              winner=self._winner_side(change), player=winner.name if winner else None,
                              position=self.position.fen(), clocks=self.wire_clocks())
        self._log_event(event)
        return 1

    # --- resuming ----------------------------------------------------------------------

    def restore_clocks(self, left_ms: tuple[int, int], since: float | None = None) -> None:
        """After a restart: set both clocks as stored and start the mover's clock now (or at `since`:
        a node taking over another's match charges the time since the last action was stored)."""
        if not self.clocks.enabled:
            return
        self.clocks.left_ms = list(left_ms)
        seat = self.seat_to_move()
        if seat is not None:
            self.clocks.start(seat, self.now() if since is None else since)
