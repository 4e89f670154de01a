"""Wire messages: every type round-trips; malformed input raises a typed `MessageError`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from protocol.actions import Sow, Swap, Transfer
from protocol.messages import (
    MAX_MESSAGE_BYTES,
    MAX_SERVER_MESSAGE_BYTES,
    Ack,
    ActionEvent,
    AnswerPuzzle,
    AskPuzzle,
    BadFieldError,
    Captured,
    CatchUp,
    ClaimWin,
    Clocks,
    CreateMatch,
    ErrorMessage,
    FetchGame,
    FindOpponent,
    GameInfo,
    GameList,
    GameOverEvent,
    GameRecord,
    GameReview,
    Hello,
    InvalidJsonError,
    JoinedEvent,
    JoinMatch,
    LeaveMatch,
    ListGames,
    ListMatches,
    ListPuzzles,
    MakeMove,
    MarkThresholds,
    MatchEvent,
    MatchList,
    MatchSummary,
    Message,
    MessageError,
    MessageTooLargeError,
    Moderate,
    Moderated,
    ModerationRow,
    Presence,
    PuzzleInfo,
    PuzzleList,
    PuzzleMove,
    PuzzleResult,
    PuzzleShown,
    Resign,
    ReviewedPly,
    ReviewGame,
    ReviewSummary,
    Seeking,
    Snapshot,
    SwapSides,
    SyncMatch,
    TransferSeed,
    UnknownTypeError,
    WatchMatch,
    Welcome,
    decode_client,
    decode_event,
    decode_server,
    encode,
    message_action,
)
from protocol.outcome import EndReason

TOKEN = "p0123456789a" + "x" * 43

CLIENT_MESSAGES: list[Message] = [
    Hello(name="alice"),
    Hello(name="alice", token=TOKEN),
    CreateMatch(variant="kalah(6,4,pie=on,clock=300+5)", seat="north", opponent="greedy", rated=False),
    FindOpponent(variant="kalah(4,3)"),
    JoinMatch(match_id="m1"),
    WatchMatch(match_id="m1", since=3),
    SyncMatch(match_id="m1"),
    LeaveMatch(match_id="m1"),
    MakeMove(match_id="m1", ply=0, bin=3),
    SwapSides(match_id="m1", ply=1),
    TransferSeed(match_id="m1", ply=0, src=2, dst=9),
    TransferSeed(match_id="m1", ply=0),
    Resign(match_id="m1"),
    ClaimWin(match_id="m1"),
    ListMatches(),
    ListGames(limit=10, offset=20, status=None, player="alice", variant="kalah(6,4)"),
    FetchGame(match_id="m1"),
    Moderate(operator_token="secret", act="ban", kind="address", target="203.0.113.7", reason="flood", actor="ops"),
    Moderate(operator_token="secret", act="rename", target="p1", name="alicia", reason="offensive"),
    ReviewGame(match_id="m1"),
    AskPuzzle(variant="Kalah(4,3)"),
    AnswerPuzzle(puzzle_id="z0123456789abcde", action="2"),
    ListPuzzles(variant="kalah(4,3)", limit=10),
]

POSITION = "4,4,0,5,5,0,2,5,5,5,5,4,4,0 N 2 p"
JOINED = JoinedEvent(match_id="m1", seq=2, side="north", player="b",
                     clocks=Clocks(south_ms=1000, north_ms=1000, running="south"))
ACTION = ActionEvent(match_id="m1", seq=5, ply=2, side="north", action="9", path=[10, 11, 12, 13],
                     capture=Captured(bin=3, seeds=4), extra_turn=False, position=POSITION)
OVER = GameOverEvent(match_id="m1", seq=6, result=None, reason=EndReason.RESIGN, winner="north", player="b",
                     position=POSITION)

SERVER_MESSAGES: list[Message] = [
    Welcome(player_id="p1", name="alice", token=TOKEN, seats=["m1"]),
    MatchList(matches=[MatchSummary(match_id="m1", variant="kalah(6,4)", south="a", status="open")]),
    Snapshot(match_id="m1", seq=4, variant="kalah(6,4)", south="a", north="b", you="south", status="live",
             record=["3", "6"], position="4,4,0,5,5,0,2,5,5,5,5,4,4,0 N 2 p",
             clocks=Clocks(south_ms=1000, north_ms=2000, running="north")),
    JOINED,
    ACTION,
    OVER,
    CatchUp(match_id="m1", seq=6, events=[ACTION.model_copy(update={"seq": 6, "capture": None}), OVER]),
    CatchUp(match_id="m1", seq=6),
    Ack(match_id="m1", ply=2, seq=5, duplicate=True),
    Presence(match_id="m1", spectators=3, south_connected=True),
    Seeking(variant="kalah(6,4)"),
    Moderated(act="bans", done="1 bans", rows=[ModerationRow(kind="address", target="203.0.113.7", reason="flood",
                                                             actor="ops@127.0.0.1", at=1800000000.5)]),
    ErrorMessage(code="out_of_turn", message="not your turn", request="move", match_id="m1"),
    GameList(games=[GameInfo(match_id="m1", variant="kalah(6,4)", south="a", north="bot:greedy", status="finished",
                             record=["3", "6", "swap"], result=None, winner="a", reason=EndReason.RESIGN,
                             created_at="2026-11-21T12:00:00+00:00", finished_at="2026-11-21T12:10:00+00:00")]),
    GameRecord(game=GameInfo(match_id="m2", variant="kalah(4,3)", status="live", created_at="2026-11-21T12:00:00")),
    GameReview(match_id="m1", variant="kalah(2,3)", budget_ms=500, exact=False, reviewed_at="2026-11-29T02:00:00+00:00",
               thresholds=MarkThresholds(inaccuracy=1, mistake=2, blunder=3),
               plies=[ReviewedPly(ply=0, side="south", player="a", action="1", value=-2, after=-2, best=["1"], loss=0,
                                  exact=True, mark="perfect"),
                      ReviewedPly(ply=1, side="north", player="b", action="5", value=-2, after=8, best=["4"],
                                  loss=10, exact=False, depth=12, mark="blunder")],
               players=[ReviewSummary(seat=0, player="a", moves=1, perfect=1, lost=0, exact=True),
                        ReviewSummary(seat=1, player="b", moves=1, perfect=0, lost=10, worst_ply=1, worst_loss=10,
                                      exact=False)]),
    PuzzleShown(id="z1", variant="kalah(4,3)", position="3,3,3,3,0,3,3,3,3,0 S 0 -", side="south",
                themes=["extra_turn"], rating=1500.0, plays=0, player_rating=1500.0),
    PuzzleResult(puzzle_id="z1", action="1", correct=False, answer="2", value=6, side="south", rated=True,
                 player="a", player_rating=1420.5, puzzle_rating=1580.0,
                 played=PuzzleMove(action="1", value=-6, loss=12, line=["7", "9"]),
                 moves=[PuzzleMove(action="2", value=6, loss=0, line=["3"]),
                        PuzzleMove(action="1", value=-6, loss=12, line=["7", "9"])]),
    PuzzleList(puzzles=[PuzzleInfo(id="z1", variant="kalah(4,3)", position="3,3,3,3,0,3,3,3,3,0 S 0 -",
                                   side="south", answer="2", value=6, threshold=2, source="self-play",
                                   moves=[PuzzleMove(action="2", value=6, loss=0),
                                          PuzzleMove(action="1", value=-6, loss=12)])]),
]


@pytest.mark.parametrize("msg", CLIENT_MESSAGES, ids=lambda m: m.type)
def test_client_messages_round_trip(msg: Message) -> None:
    """Every client message type encodes and decodes back to an equal value."""
    assert decode_client(encode(msg)) == msg


@pytest.mark.parametrize("msg", SERVER_MESSAGES, ids=lambda m: f"{m.type}-{getattr(m, 'kind', '')}")
def test_server_messages_round_trip(msg: Message) -> None:
    """Every server message type (and every event kind) encodes and decodes back to an equal value."""
    assert decode_server(encode(msg)) == msg


def test_events_are_told_apart_by_kind() -> None:
    """Each event kind decodes to its own model; unknown or missing kinds are refused like unknown types."""
    decoded = [decode_server(encode(event)) for event in (JOINED, ACTION, OVER)]
    assert [(type(e), e.kind) for e in decoded if isinstance(e, MatchEvent)] == [
        (JoinedEvent, "joined"), (ActionEvent, "action"), (GameOverEvent, "game_over")]
    over = decode_event(encode(OVER))
    assert isinstance(over, GameOverEvent) and over.reason is EndReason.RESIGN
    for kind in ("left", "spectators"):
        with pytest.raises(UnknownTypeError):
            decode_server(json.dumps({"type": "event", "match_id": "m1", "seq": 1, "kind": kind}))
    with pytest.raises(UnknownTypeError):
        decode_server(json.dumps({"type": "event", "match_id": "m1", "seq": 1}))
    with pytest.raises(BadFieldError):  # the fields of one kind do not fit another
        decode_server(json.dumps({"type": "event", "match_id": "m1", "seq": 1, "kind": "joined", "side": "south",
                                  "player": "a", "action": "3"}))


def test_end_reasons_and_error_codes_are_closed_lists() -> None:
    """A game_over with an unknown reason, or an error with a code no error class has, is refused."""
    over = json.loads(encode(OVER))
    with pytest.raises(BadFieldError):
        decode_server(json.dumps({**over, "reason": "boredom"}))
    with pytest.raises(BadFieldError):
        decode_server(json.dumps({"type": "error", "code": "no_such_code", "message": "?"}))
    listing = json.loads(encode(next(m for m in SERVER_MESSAGES if isinstance(m, GameList))))
    listing["games"][0]["reason"] = "boredom"
    with pytest.raises(BadFieldError):
        decode_server(json.dumps(listing))


def test_server_messages_may_be_longer_than_client_ones() -> None:
    """A long catch-up decodes (server messages have their own, larger limit)."""
    long = CatchUp(match_id="m1", seq=5, events=[ACTION] * (MAX_MESSAGE_BYTES // len(encode(ACTION)) + 1))
    assert MAX_MESSAGE_BYTES < len(encode(long)) < MAX_SERVER_MESSAGE_BYTES
    assert decode_server(encode(long)) == long


def test_a_puzzle_holds_one_answer_that_loses_nothing_and_every_other_move_loses_the_threshold() -> None:
    """A puzzle whose answer is not listed first at no loss, or with another move losing less than its threshold,
    cannot be made or read back."""
    answer, wrong = PuzzleMove(action="2", value=6, loss=0), PuzzleMove(action="1", value=4, loss=2)
    base: dict[str, Any] = {"id": "z1", "variant": "kalah(4,3)", "position": "3,3,3,3,0,3,3,3,3,0 S 0 -",
                            "side": "south", "answer": "2", "value": 6, "source": "self-play"}
    assert PuzzleInfo(**base, threshold=2, moves=[answer, wrong]).answer == "2"
    bad: list[dict[str, Any]] = [{"threshold": 3, "moves": [answer, wrong]}, {"threshold": 2, "moves": [wrong, answer]},
                                 {"threshold": 2, "moves": [answer, answer]}]
    for fields in bad:
        with pytest.raises(ValueError):
            PuzzleInfo.model_validate({**base, **fields})


def test_every_message_type_is_covered() -> None:
    """The round-trip lists hold every type of both unions."""
    client_types = {m.type for m in CLIENT_MESSAGES}  # type: ignore[attr-defined]
    server_types = {m.type for m in SERVER_MESSAGES}  # type: ignore[attr-defined]
    assert client_types == {"hello", "create", "seek", "join", "watch", "sync", "leave", "move", "swap",
                            "transfer", "resign", "claim", "list", "games", "game", "moderate", "review",
                            "puzzle", "puzzle_answer", "puzzles"}
    assert server_types == {"welcome", "matches", "snapshot", "event", "catch_up", "ack", "presence", "seeking",
                            "game_list", "game_record", "moderated", "error", "game_review", "puzzle_shown",
                            "puzzle_result", "puzzle_list"}


def test_message_actions() -> None:
    """Action messages map to rules actions."""
    assert message_action(MakeMove(match_id="m", ply=0, bin=4)) == Sow(4)
    assert message_action(SwapSides(match_id="m", ply=1)) == Swap()
    assert message_action(TransferSeed(match_id="m", ply=0, src=1, dst=8)) == Transfer(1, 8)


@pytest.mark.parametrize(("text", "error"), [
    ("{", InvalidJsonError),
    ("not json", InvalidJsonError),
    ("[1, 2]", InvalidJsonError),
    ("null", InvalidJsonError),
    ('{"type": "teleport"}', UnknownTypeError),
    ("{}", UnknownTypeError),
    ('{"type": 5}', UnknownTypeError),
    ('{"type": "move", "match_id": "m1", "ply": 0}', BadFieldError),
    ('{"type": "move", "match_id": "m1", "ply": 0, "bin": 3, "extra": 1}', BadFieldError),
    ('{"type": "move", "match_id": "m1", "ply": "0", "bin": 3}', BadFieldError),
    ('{"type": "move", "match_id": "m1", "ply": 0, "bin": 3.5}', BadFieldError),
    ('{"type": "move", "match_id": "m1", "ply": 99999999999999999999999, "bin": 3}', BadFieldError),
    ('{"type": "move", "match_id": "m1", "ply": -1, "bin": 3}', BadFieldError),
    ('{"type": "move", "match_id": "../etc", "ply": 0, "bin": 3}', BadFieldError),
    ('{"type": "hello", "name": ""}', BadFieldError),
    ('{"type": "hello", "name": "a b"}', BadFieldError),
    ('{"type": "create", "variant": "kalah(99,4)"}', BadFieldError),
    ('{"type": "create", "variant": "chess"}', BadFieldError),
    ('{"type": "transfer", "match_id": "m1", "ply": 0, "src": 3}', BadFieldError),
    ('{"type": "games", "limit": 5000}', BadFieldError),
    ('{"type": "games", "variant": "kalah(0,4)"}', BadFieldError),
])
def test_malformed_messages_raise(text: str, error: type[MessageError]) -> None:
    """Each kind of malformed input raises its own `MessageError` subclass."""
    with pytest.raises(error):
        decode_client(text)


def test_huge_message_is_refused_before_parsing() -> None:
    """A message over the size limit is refused without being parsed."""
    text = json.dumps({"type": "hello", "name": "a" * MAX_MESSAGE_BYTES})
    with pytest.raises(MessageTooLargeError):
        decode_client(text)


def test_errors_have_wire_codes() -> None:
    """Every message error kind carries a distinct wire code."""
    codes = {cls.code for cls in (MessageError, MessageTooLargeError, InvalidJsonError, UnknownTypeError,
                                  BadFieldError)}
    assert len(codes) == 5


def test_server_decoder_refuses_client_messages() -> None:
    """The server-side union does not accept client message types."""
    with pytest.raises(UnknownTypeError):
        decode_server(encode(Hello(name="a")))
