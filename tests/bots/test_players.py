"""Bot players: canonical ids, legal actions, pie rule and opening transfer, proved play and books, shared engines."""

from __future__ import annotations

import logging
import random
import threading
from pathlib import Path
from typing import Any

import pytest

import bots._search as csearch
from bots import book as book_mod
from bots import egdb
from bots import engines as engines_mod
from bots.book import Book, Completion
from bots.book_builder import Builder, Plan
from bots.core import table_bytes
from bots.engines import Engines
from bots.names import BotNameError
from bots.players import PerfectPlayer, Player, make_player
from bots.solver import Engine, relative_board
from protocol import Capture, Game, Position, Sow, Swap, Transfer, Variant

NAMES = ["random", "greedy", "alphabeta:1", "alphabeta:6", "strong", "perfect"]


@pytest.fixture(autouse=True)
def egdb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Databases built by the bots go to a temporary directory; operators' books are not read."""
    monkeypatch.setenv("KALAH_EGDB_DIR", str(tmp_path))
    monkeypatch.setenv("KALAH_BOOK_DIR", str(tmp_path / "books"))
    return tmp_path


@pytest.mark.parametrize("name", NAMES)
def test_names_make_players(name: str) -> None:
    """Each canonical id makes a Player that reports that id as its name."""
    player = make_player(name)
    assert isinstance(player, Player)
    assert player.name == name


@pytest.mark.parametrize("name", ["", "minimax", "alphabeta", "alphabeta:0", "alphabeta:x", "greedy:3",
                                  "perfect:-1", "random:2", "perfect:8", "Random ", "random\t", "GREEDY",
                                  "alphabeta:09", "alphabeta:\u0663"])
def test_only_canonical_ids_make_players(name: str) -> None:
    """Anything but a canonical id, even a near spelling of one, raises BotNameError (wire code unknown_bot)."""
    with pytest.raises(BotNameError, match="unknown bot") as info:
        make_player(name)
    assert info.value.code == "unknown_bot"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text", ["kalah(3,3)", "kalah(4,2,pie=on,transfer=on)", "kalah(2,3,clockwise=on)",
                                  "kalah(3,2,relay=on,extra=off)", "kalah(3,3,majority=on,capture=empty)"])
def test_whole_games_are_legal(name: str, text: str) -> None:
    """A bot plays whole games against a random bot with legal actions only."""
    variant = Variant.parse(text)
    bot, other = make_player(name), make_player("random")
    game = Game(variant)
    seat = 0
    while not game.over and game.ply < 200:
        mover = bot if game.position.to_move == seat else other
        action = mover.decide(game.position, 0.2)
        assert action in game.position.legal_actions()
        game.play(action)
        if isinstance(action, Swap):
            seat = 1 - seat


def test_perfect_plays_only_best_moves() -> None:
    """On a solved board the perfect bot always picks a move of the best value."""
    v = Variant(houses=3, seeds=3)
    engine = Engine(v)
    bot = make_player("perfect")
    rng = random.Random(3)
    pos = Position.initial(v)
    while not pos.over:
        action = bot.decide(pos, 2.0)
        sol = engine.solve(pos, per_move=True)
        assert isinstance(action, Sow)
        assert action.bin in sol.best
        pos = pos.apply(Sow(rng.choice(pos.legal_bins())))


@pytest.mark.parametrize("name", ["random", "greedy", "alphabeta:4", "strong", "perfect"])
def test_swap_decision_follows_the_value(name: str) -> None:
    """Offered the swap, a bot swaps exactly when its evaluation favours the opener (South)."""
    v = Variant(houses=3, seeds=3, pie=True)
    start = Position.initial(v)
    bot = make_player(name)
    for first in start.legal_bins():
        pos = start.apply(Sow(first))
        while not pos.swap_offered:
            pos = pos.apply(Sow(pos.legal_bins()[0]))
        action = bot.decide(pos, 2.0)
        assert (action == Swap()) == (bot.estimate(pos, 2.0) > 0)


def test_perfect_swaps_exactly_when_the_opener_wins() -> None:
    """The perfect bot swaps after an opening that wins for South and not after a losing one."""
    v = Variant(houses=3, seeds=3, pie=True)
    engine = Engine(v.with_options(pie=False))
    start = Position.initial(v)
    bot = make_player("perfect")
    seen = set()
    for first in start.legal_bins():
        pos = start.apply(Sow(first))
        while not pos.swap_offered:
            pos = pos.apply(Sow(pos.legal_bins()[0]))
        value = engine.solve(pos).value
        seen.add(value > 0)
        assert (bot.decide(pos, 2.0) == Swap()) == (value > 0)
    assert seen == {True, False}


@pytest.mark.parametrize("name", NAMES)
def test_opening_transfer_is_chosen(name: str) -> None:
    """With the opening transfer due, every bot answers with a transfer (or none)."""
    v = Variant(houses=3, seeds=2, opening_transfer=True)
    pos = Position.initial(v)
    action = make_player(name).decide(pos, 0.5)
    assert isinstance(action, Transfer)
    assert action in pos.legal_actions()


def test_perfect_transfer_is_the_worst_for_south() -> None:
    """The perfect bot's opening transfer leaves South the lowest exact value."""
    v = Variant(houses=2, seeds=2, opening_transfer=True)
    pos = Position.initial(v)
    engine = Engine(v.with_options(opening_transfer=False))
    values = {}
    for action in pos.legal_actions():
        after = pos.apply(action)
        values[action] = after.margin if after.over else engine.solve(after).value
    chosen = make_player("perfect").decide(pos, 2.0)
    assert values[chosen] == min(values.values())


def test_one_player_serves_several_threads_with_one_engine_each() -> None:
    """Concurrent decisions of one player borrow separate engines, kept afterwards for the next moves."""
    engines = Engines()
    bot = make_player("alphabeta:8", engines)
    pos = Position.initial(Variant(houses=6, seeds=4))
    found: list[object] = []
    threads = [threading.Thread(target=lambda: found.append(bot.decide(pos, 0.3))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 3 and all(a in pos.legal_actions() for a in found)
    assert 1 <= len(engines) <= 3 and engines.made == len(engines)
    bot.decide(pos, 0.05)
    assert engines.made == len(engines)


def test_engines_are_bounded_in_bytes() -> None:
    """Past the byte bound, idle engines are dropped least recently used first; the estimate counts tables."""
    v = Variant(houses=4, seeds=3)
    one = Engine(v, tt_log2=16, workers=1).table_bytes()
    assert one == 24 * ((1 << 16) + (1 << 16))  # the main table and the small one
    engines = Engines(max_bytes=2 * one)
    bots = [make_player(f"alphabeta:{d}", engines) for d in (2, 3, 4, 5)]
    pos = Position.initial(v)
    for bot in bots:
        bot.decide(pos, 0.05)
        assert engines.nbytes() <= 2 * one
    assert engines.made == 4 and len(engines) == 2


@pytest.mark.parametrize("read", [False, True])
def test_mapped_databases_beyond_the_bound_stay_with_the_bot(egdb_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                             read: bool) -> None:
    """Mapped levels larger than the byte bound stay from move to move, and so do the bot's engine and table (they
    were dropped after every move, the next move searching on a new engine without them); levels read into the
    process count against the bound, and the engine holding them is dropped past it."""
    v = Variant(houses=3, seeds=3)
    egdb.load(v, 6, csearch, egdb_dir)
    monkeypatch.setenv(egdb.READ_ENV, "1" if read else "0")
    engines = Engines(max_bytes=table_bytes("c", 16) + 1, egdb_dir=egdb_dir)
    bot = PerfectPlayer(egdb_seeds=6, engines=engines)
    for _ in range(3):
        bot.decide(Position.initial(v), 0.5)
    assert engines.made == (3 if read else 1)
    assert engines.level_bytes() == (0 if read else sum(lv.bytes for lv in egdb.plan(v, 6, egdb_dir)))


def test_perfect_uses_existing_databases_and_never_builds(egdb_dir: Path) -> None:
    """The perfect bot plays without databases that are not on disk, and uses those that are."""
    v = Variant(houses=3, seeds=3)
    engines = Engines(egdb_dir=egdb_dir)
    bot = PerfectPlayer(egdb_seeds=6, engines=engines)
    assert bot.decide(Position.initial(v), 0.5) in Position.initial(v).legal_actions()
    assert list(egdb_dir.iterdir()) == [] and engines.nbytes() == table_bytes("c", 16)
    egdb.load(v, 4, csearch, egdb_dir)
    fresh = Engines(egdb_dir=egdb_dir)
    PerfectPlayer(egdb_seeds=6, engines=fresh).decide(Position.initial(v), 0.5)
    assert fresh.nbytes() == table_bytes("c", 16) + sum(lv.bytes for lv in egdb.plan(v, 4, egdb_dir))


@pytest.mark.parametrize("opponent", ["random", "greedy", "alphabeta:4", "strong", "perfect"])
@pytest.mark.parametrize("capture", ["standard", "empty"])
def test_perfect_moves_are_proved_and_best_against_every_bot(opponent: str, capture: str) -> None:
    """In either seat against each bot, every perfect move is flagged proved and has the solver's best value."""
    v = Variant(houses=4, seeds=3, capture=Capture(capture))
    engine = Engine(v)
    bot = PerfectPlayer()
    for seat in (0, 1):
        other = make_player(opponent) if opponent != "perfect" else bot
        pos = Position.initial(v)
        while not pos.over:
            if pos.to_move != seat and other is not bot:
                pos = pos.apply(other.decide(pos, 0.2))
                continue
            decision = bot.explain(pos, 2.0)
            sol = engine.solve(pos, per_move=True)
            assert decision.exact and isinstance(decision.action, Sow)
            assert decision.action.bin in sol.best
            assert decision.value in (None, sol.value)
            pos = pos.apply(decision.action)


def test_perfect_plays_the_book_move_without_an_engine(tmp_path: Path) -> None:
    """A position in the book is answered from it: the book's move, proved, and no engine is made."""
    v = Variant(houses=4, seeds=4)
    book = Book(egdb.rule_key(v))
    Builder(Engine(v, tt_log2=16), book, Plan(depth=0, node_limit=100)).run(Position.initial(v))
    book.save(tmp_path / "books" / book_mod.file_name(v))
    engines = Engines(book_dirs=[tmp_path / "books"])
    decision = PerfectPlayer(engines=engines).explain(Position.initial(v), 1.0)
    entry = book.get(relative_board(Position.initial(v)))
    assert entry is not None and decision.source == "book" and decision.exact
    assert decision.action == Sow(entry.pit + 1) and decision.value == entry.value
    assert engines.made == 0


def test_book_moves_look_for_databases_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Book moves start reading the rule set's databases once; finding none, later moves do not look again."""
    v = Variant(houses=4, seeds=4)
    book = Book(egdb.rule_key(v))
    Builder(Engine(v, tt_log2=16), book, Plan(depth=0, node_limit=100)).run(Position.initial(v))
    book.save(tmp_path / "books" / book_mod.file_name(v))
    reads: list[int] = []
    real_load = engines_mod.Engines._load

    def counted(self: Engines, key: Any, lk: Any, have: Any = None) -> list[Any]:
        """Count the reads."""
        reads.append(lk[1])
        return real_load(self, key, lk, have)

    monkeypatch.setattr(engines_mod.Engines, "_load", counted)
    engines = Engines(egdb_dir=tmp_path / "egdb", book_dirs=[tmp_path / "books"])
    bot = PerfectPlayer(engines=engines)
    for _ in range(5):
        assert bot.explain(Position.initial(v), 1.0).source == "book"
    assert engines.preload(v, bot.egdb_seeds, timeout=10)
    stages = list(reads)  # one reading, in at most two stages, the last up to the bot's seeds
    assert len(stages) <= 2 and stages[-1] == min(bot.egdb_seeds, v.total_seeds)
    for _ in range(5):
        bot.explain(Position.initial(v), 1.0)
    assert reads == stages and not engines.ready(v, bot.egdb_seeds, timeout=0)


def test_perfect_says_when_it_has_no_proof(caplog: pytest.LogCaptureFixture) -> None:
    """Without a book or databases for a big board, the move comes from a search, flagged and logged as not proved."""
    v = Variant(houses=6, seeds=6)
    with caplog.at_level(logging.INFO, logger="bots.players"):
        decision = PerfectPlayer().explain(Position.initial(v), 0.3)
    assert not decision.exact and decision.source == "search"
    assert decision.action in Position.initial(v).legal_actions()
    assert any("not proved" in r.getMessage() for r in caplog.records)


def test_large_databases_are_read_in_the_background(egdb_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Levels too large to read during a move are read by a thread; engines lent meanwhile take them up later."""
    v = Variant(houses=3, seeds=3)
    egdb.load(v, 6, csearch, egdb_dir)
    monkeypatch.setattr(engines_mod, "SYNC_LOAD_BYTES", 0)
    gate = threading.Event()
    real_load = engines_mod.Engines._load

    def slow_load(self: Engines, key: Any, lk: Any, have: Any = None) -> list[Any]:
        """Read the levels once the test lets it."""
        gate.wait(10)
        return real_load(self, key, lk, have)

    monkeypatch.setattr(engines_mod.Engines, "_load", slow_load)
    engines = Engines(egdb_dir=egdb_dir)
    assert not engines.ready(Variant(houses=3, seeds=3, clockwise=True), 6, timeout=10)
    with engines.borrow("perfect", v, 16, 6) as engine:
        assert engine.levels == []
    gate.set()
    assert engines.preload(v, 6, timeout=10)
    with engines.borrow("perfect", v, 16, 6) as again:
        assert again is engine and len(engine.levels) == 7
        assert engine.solve(Position.initial(v)).value == Engine(v).solve(Position.initial(v)).value
    assert engines.nbytes() == table_bytes("c", 16) + sum(lv.bytes for lv in egdb.plan(v, 6, egdb_dir))


def test_large_databases_come_smaller_levels_first(egdb_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read in the background, the levels up to a quarter of the bytes are shared first, then all of them."""
    v = Variant(houses=3, seeds=3)
    egdb.load(v, 8, csearch, egdb_dir)
    monkeypatch.setattr(engines_mod, "SYNC_LOAD_BYTES", 0)
    gate = threading.Event()
    real_load = engines_mod.Engines._load
    stages: list[int] = []

    def staged(self: Engines, key: Any, lk: Any, have: Any = None) -> list[Any]:
        """Read one stage; hold the last one until the test lets it."""
        if stages:
            gate.wait(10)
        stages.append(lk[1])
        return real_load(self, key, lk, have)

    monkeypatch.setattr(engines_mod.Engines, "_load", staged)
    engines = Engines(egdb_dir=egdb_dir)
    assert not engines.preload(v, 8, timeout=0.2)
    assert engines.ready(v, 8, timeout=10)
    with engines.borrow("perfect", v, 16, 8) as engine:
        first = len(engine.levels) - 1
    gate.set()
    assert engines.preload(v, 8, timeout=10)
    with engines.borrow("perfect", v, 16, 8) as engine:
        assert len(engine.levels) == 9
    sizes = [lv.size for lv in egdb.plan(v, 8, egdb_dir)]
    assert stages == [first, 8] and sum(sizes[:first]) <= sum(sizes) // 4 < sum(sizes[: first + 1])


def test_perfect_keeps_the_games_value_where_the_best_move_is_not_proved(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The game's value is the book's for the start (none with the pie rule); when no proof of the best move ends in
    time, the bot plays a move proved to keep that value, flagged `keep`, in both seats against random moves."""
    v = Variant(houses=4, seeds=4)
    book = Book(egdb.rule_key(v))
    Builder(Engine(v, tt_log2=16), book, Plan(depth=0, node_limit=100)).run(Position.initial(v))
    book.save(tmp_path / "books" / book_mod.file_name(v))
    bot = PerfectPlayer(engines=Engines(book_dirs=[tmp_path / "books"]))
    entry = book.get(relative_board(Position.initial(v)))
    assert entry is not None and bot.game_value(Position.initial(v)) == entry.value
    assert bot.game_value(Position.initial(Variant(houses=4, seeds=4, pie=True))) is None

    def no_proof(*_: Any, **__: Any) -> Any:
        """No best move is ever proved in time."""
        raise TimeoutError("search time limit reached")

    monkeypatch.setattr(Engine, "prove", no_proof)
    judge = Engine(v, tt_log2=16)
    rng = random.Random(3)
    kept = 0
    for seat in (0, 1):
        pos = Position.initial(v)
        while not pos.over:
            if pos.to_move != seat:
                pos = pos.apply(rng.choice(pos.legal_actions()))
                continue
            decision = bot.explain(pos, 1.0)
            assert isinstance(decision.action, Sow)
            if decision.source == "keep":
                kept += 1
                assert not decision.exact and decision.value == entry.value
            else:
                assert decision.source in ("book", "forced")
            board = relative_board(pos)
            mover = entry.value if seat == 0 else -entry.value
            need = mover - (board[v.houses] - board[-1])
            bin_ = decision.action.bin
            assert judge.reaches(board, bin_ - 1 if seat == 0 else bin_ - v.houses - 2, need)
            pos = pos.apply(decision.action)
    assert kept > 0


@pytest.mark.parametrize("complete", [False, True])
def test_with_a_complete_book_the_bot_proves_the_best_move_before_keeping_the_value(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, complete: bool) -> None:
    """Where the book records a complete build of the start with the bot's databases, the bot's time goes to the proof
    of the best move first (every move proved, no search for a move keeping the game's value); with a book that is not
    complete, a move keeping the value is looked for first, as before."""
    v = Variant(houses=4, seeds=4)
    book = Book(egdb.rule_key(v))
    Builder(Engine(v, tt_log2=16), book, Plan(depth=0, node_limit=100)).run(Position.initial(v))
    if complete:
        book.record(Completion(v.text(), 0, 100, 16))
    book.save(tmp_path / "books" / book_mod.file_name(v))
    bot = PerfectPlayer(engines=Engines(book_dirs=[tmp_path / "books"]), egdb_seeds=0)
    calls: list[str] = []
    real_keep, real_prove = Engine.keep, Engine.prove

    def keep(self: Engine, *args: Any, **kw: Any) -> int | None:
        """Note the search for a move keeping the value."""
        calls.append("keep")
        return real_keep(self, *args, **kw)

    def prove(self: Engine, *args: Any, **kw: Any) -> tuple[int, int]:
        """Note the proof of the best move."""
        calls.append("prove")
        return real_prove(self, *args, **kw)

    monkeypatch.setattr(Engine, "keep", keep)
    monkeypatch.setattr(Engine, "prove", prove)
    rng = random.Random(5)
    pos = Position.initial(v)
    proved = 0
    while not pos.over:
        if pos.to_move == 1:
            pos = pos.apply(rng.choice(pos.legal_actions()))
            continue
        calls.clear()
        decision = bot.explain(pos, 1.0)
        assert decision.exact and decision.source in ("book", "proof", "forced")
        if decision.source == "proof":
            proved += 1
            assert calls == (["prove"] if complete else ["keep", "prove"])
        pos = pos.apply(decision.action)
    assert proved > 0
