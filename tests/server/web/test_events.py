"""The events pages in a real headless browser against a real server: /events lists a Swiss of four people,
/event/ID shows its standings, games (watch and replay links) and crosstable as the server answers them, follows
the event into its next round, and an unknown event shows only a message and a way back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio

from server.assembly import RunningServer
from tests.helpers.browser import SKIP, Pages, screenshot_path
from tests.helpers.wire import Client, Json

pytestmark = SKIP

QUICK = "kalah(1,1,clock=60+1)"
"""One house, one seed: South's only sowing ends the game drawn 1-1; until then the game stays under way."""


@pytest_asyncio.fixture(loop_scope="module")  # the module's loop, as every fixture here (see conftest.py)
async def players(arena: RunningServer) -> AsyncIterator[dict[str, Client]]:
    """Four connected people, closed at the end of the test, even on failure."""
    clients: dict[str, Client] = {}
    try:
        for name in ("ann", "bob", "cat", "dan"):
            clients[name] = await Client.open(arena.url, name)
        yield clients
    finally:
        for client in clients.values():
            await client.close()


async def _server_state(arena: RunningServer, event_id: str, reader_name: str) -> Json:
    """The event as the server answers `event` to a new connection (of a name not yet used)."""
    reader = await Client.open(arena.url, reader_name)
    try:
        return await reader.request("event_state", type="event", event_id=event_id, follow=False)
    finally:
        await reader.close()


async def _shown_standings(page: Any) -> list[list[str]]:
    """The standings table as the page shows it: rank, name, score and tiebreaks per row."""
    rows: list[list[str]] = await page.eval_on_selector_all(
        "#standings tbody tr", "rows => rows.map(r => [...r.cells].slice(0, 4).map(c => c.textContent))")
    return rows


def _expected_standings(state: Json) -> list[list[str]]:
    """The standings of an `event_state` as the page writes them: rank, name, score and tiebreaks (`1`, `0.5`)."""
    return [[str(r["rank"]), r["name"], f"{r['score']:g}", f"Buchholz {r['buchholz']:g}, S-B {r['sonneborn_berger']:g}"]
            for r in state["standings"]]


async def test_events_pages_show_the_servers_standings_games_and_updates(
        arena: RunningServer, pages: Pages, players: dict[str, Client], tmp_path: Path) -> None:
    """The lobby links to /events, which lists the Swiss with its kind, variant, status and entrants; its page
    shows the server's standings, a watch link for the game under way and a replay link for the finished one,
    the crosstable, and follows the event into round 2; /event/UNKNOWN shows only a message and a way back."""
    settings = {"name": "Web Swiss", "kind": "swiss", "rounds": 2, "variant": QUICK, "min_entrants": 4,
                "max_entrants": 4}
    eid = (await players["ann"].request("event_state", type="event_create", settings=settings))["event_id"]
    for client in players.values():
        await client.request("event_state", type="event_join", event_id=eid)
    state = await players["ann"].expect("event_state", 10, lambda m: m["round"] == 1 and len(m["pairings"]) == 2)
    first, second = sorted(state["pairings"], key=lambda p: p["table"])
    await players[first["south"]].send(type="move", match_id=first["match_id"], ply=0, bin=1)
    await players["ann"].expect("event_state", 10, lambda m: any(p["result"] == "1/2-1/2" for p in m["pairings"]))

    lobby = await pages.open("/")
    await lobby.get_by_role("link", name="Arenas, Swiss tournaments and round-robins").click()
    await lobby.wait_for_url("**/events")
    row = lobby.locator(f"#events tr[data-event='{eid}']")
    await row.wait_for(timeout=10_000)
    cells = await row.locator("td").all_inner_texts()
    assert cells == ["Web Swiss", "Swiss", QUICK, "running", "1/2", "4/4"]
    await row.get_by_role("link", name="event Web Swiss (Swiss, running)").click()
    await lobby.wait_for_url(f"**/event/{eid}")
    await lobby.wait_for_function("() => document.querySelectorAll('#standings tbody tr').length === 4")
    server = await _server_state(arena, eid, "reader1")
    assert await _shown_standings(lobby) == _expected_standings(server)
    assert await lobby.inner_text("#title") == "Web Swiss"
    watch = lobby.get_by_role("link", name=f"watch {second['south']} v {second['north']} (game 1.2)")
    assert await watch.get_attribute("href") == f"/watch/{second['match_id']}"
    replay = lobby.get_by_role("link", name=f"replay {first['south']} v {first['north']} (game 1.1)")
    assert await replay.get_attribute("href") == f"/game/{first['match_id']}"
    crossed = await lobby.eval_on_selector_all("#crosstable tbody tr", "rows => rows.map(r => r.dataset.name)")
    assert crossed == [r["name"] for r in server["crosstable"]]

    await players[second["south"]].send(type="move", match_id=second["match_id"], ply=0, bin=1)
    await lobby.wait_for_function(
        "() => document.getElementById('status').textContent.startsWith('running, round 2/2')", timeout=15_000)
    await lobby.wait_for_function("() => document.querySelectorAll('#pairings tbody tr.current').length === 2")
    server = await _server_state(arena, eid, "reader2")
    assert server["round"] == 2
    await lobby.screenshot(path=str(screenshot_path(tmp_path, "event.png")), full_page=True)
    assert await _shown_standings(lobby) == _expected_standings(server)
    for p in (p for p in server["pairings"] if p["round"] == 2):
        link = lobby.get_by_role("link", name=f"watch {p['south']} v {p['north']} (game 2.{p['table']})")
        assert await link.get_attribute("href") == f"/watch/{p['match_id']}"
    await lobby.get_by_role("link", name=f"watch {second['south']} v {second['north']} (game 1.2)").wait_for(
        state="detached")

    for unknown_id in ("nosuchevent", "no-such-id"):  # the server's unknown_event; an id no event can have
        unknown = await pages.open(f"/event/{unknown_id}")
        await unknown.locator("#missing").wait_for(timeout=10_000)
        assert await unknown.inner_text("#missing-text") == f"No event {unknown_id} on this server."
        assert not await unknown.locator("#event").is_visible()
        back = unknown.get_by_role("link", name="Back to the events")
        assert await back.get_attribute("href") == "/events"
