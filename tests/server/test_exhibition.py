"""Exhibition (bot against bot) matches and the standings request, over real sockets."""

from __future__ import annotations

from server.assembly import RunningServer
from tests.helpers.wire import OPERATOR, Client, is_game_over


async def test_exhibition_plays_from_the_opening_to_the_end(arena: RunningServer) -> None:
    """The opening is played first, the bots finish the game, a spectator sees every event."""
    c = await Client.open(arena.url, "host")
    await c.send(type="exhibition", south="greedy", north="random", opening=["3", "6"], match_id="ex-1")
    snap = await c.expect("snapshot")
    assert snap["match_id"] == "ex-1" and snap["record"] == ["3", "6"] and snap["status"] == "live"
    assert snap["south"] == "bot:greedy" and snap["north"] == "bot:random"
    over = await c.expect("event", timeout=20, where=is_game_over)
    actions = [e for e in c.events("ex-1") if e["kind"] == "action"]
    assert [e["ply"] for e in actions] == list(range(2, 2 + len(actions)))
    assert over["reason"] in ("empty", "majority", "repetition")
    await c.close()


async def test_exhibition_refusals(arena: RunningServer) -> None:
    """An illegal opening, an unknown bot and a taken match id are refused with typed errors."""
    c = await Client.open(arena.url, "host")
    await c.send(type="exhibition", south="greedy", north="random", opening=["3", "3"])
    assert await c.error() == "illegal_record"
    await c.send(type="exhibition", south="greedy", north="nobody")
    assert await c.error() == "unknown_bot"
    await c.send(type="exhibition", south="greedy", north="random", match_id="ex-2")
    await c.expect("snapshot")
    await c.send(type="exhibition", south="greedy", north="random", match_id="ex-2")
    assert await c.error() == "match_exists"
    await c.send(type="list")
    assert any(m["match_id"] == "ex-2" for m in (await c.expect("matches"))["matches"])
    await c.close()


async def test_standings_after_rated_games(arena: RunningServer) -> None:
    """Standings list every rated player with Glicko-2 rating, results and head-to-head; no hello needed."""
    c = await Client.open(arena.url, "host")
    for i in range(2):
        await c.send(type="exhibition", south="alphabeta:3", north="random", match_id=f"r{i}", rated=True,
                     operator_token=OPERATOR)
        await c.expect("snapshot")
    overs = await c.until_received("event", 2, where=is_game_over, timeout=40)
    wins = sum(o["winner"] == "south" for o in overs)  # alphabeta:3 plays South in both
    losses = sum(o["winner"] == "north" for o in overs)
    anon = await Client.open(arena.url, None)
    await anon.send(type="standings")
    table = await anon.expect("standings_table")
    rows = {r["name"]: r for r in table["rows"]}
    assert set(rows) == {"bot:alphabeta:3", "bot:random"}
    ab, rnd = rows["bot:alphabeta:3"], rows["bot:random"]
    assert (ab["games"], ab["wins"], ab["draws"], ab["losses"]) == (2, wins, 2 - wins - losses, losses)
    assert (rnd["wins"], rnd["losses"]) == (losses, wins)
    if wins > losses:
        assert ab["rating"] > 1500 > rnd["rating"]
    assert rnd["rd"] < 350
    assert {"player": "bot:alphabeta:3", "opponent": "bot:random", "wins": wins, "draws": 2 - wins - losses,
            "losses": losses} in table["head_to_head"]
    await c.close()
    await anon.close()
