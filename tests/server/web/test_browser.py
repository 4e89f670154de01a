"""The spectator page in a real headless browser (Playwright with the system's Chromium), against a real server:
following live matches, resuming after a dropped connection, replays with the solver's values, and the page's rules
twin against the server's rules. Skipped or failed as tests/helpers/browser.py says.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from protocol import Game, Variant
from protocol.messages import Analyse
from server.assembly import RunningServer
from server.front.analysis import Analyst
from tests.helpers.browser import SKIP, Pages, fens_of, screenshot_path, still_screenshot, wait_fen
from tests.helpers.wire import OPERATOR, Client, is_game_over

pytestmark = SKIP
PACE_MS = 150


async def board_counts(page: Any) -> dict[int, int]:
    """The seeds the board shows, by bin number."""
    pits = await page.eval_on_selector_all(
        "#board .pit", "nodes => nodes.map(n => [n.dataset.bin, n.querySelector('.count').textContent])")
    return {int(b): int(c) for b, c in pits}


def pits_of(fen: str) -> dict[int, int]:
    """The seeds of a position text, by bin number."""
    return {i + 1: int(x) for i, x in enumerate(fen.split()[0].split(","))}


async def test_follow_a_live_match_from_the_lobby_to_its_end(arena: RunningServer, pages: Pages,
                                                             tmp_path: Path) -> None:
    """/ lists the paced exhibition (players with ratings, variant, ply, spectators); its watch page shows
    every position of the server's record once, in order, to the end, then the lobby lists the finished game."""
    host = await Client.open(arena.url, "host")
    await host.send(type="exhibition", south="greedy", north="alphabeta:2", rated=True, operator_token=OPERATOR)
    await host.expect("event", timeout=20, where=is_game_over)  # a rated game: the bots now have ratings
    await host.request("snapshot", type="exhibition", variant="kalah(6,4,clock=300+5)", south="greedy",
                       north="alphabeta:2", pace_ms=PACE_MS, match_id="show-1")
    lobby = await pages.open("/")
    row = lobby.locator("#live tr[data-match='show-1']")
    await row.wait_for(timeout=10_000)
    await lobby.wait_for_function("() => document.querySelector(\"#live tr[data-match='show-1']\").innerText"
                                  ".includes('±')")
    text = await row.inner_text()
    assert "bot:greedy" in text and "bot:alphabeta:2" in text and "kalah(6,4,clock=300+5)" in text
    assert int(await row.locator("td[data-label='Ply']").inner_text()) >= 0
    assert int(await row.locator("td[data-label='Watching']").inner_text()) >= 1  # the host follows it
    await row.get_by_role("link", name="watch").click()
    await lobby.wait_for_url("**/watch/show-1")
    await lobby.wait_for_function("() => document.getElementById('moves').children.length >= 6", timeout=20_000)
    assert re.search(r"\b[1-9]\d* watching", await lobby.inner_text("#meta"))
    north, south = [await lobby.locator(f".store.{side}").bounding_box() for side in ("north", "south")]
    assert north and south and north["x"] + north["width"] <= south["x"]  # North's store on the left
    await lobby.set_viewport_size({"width": 1100, "height": 620})
    await still_screenshot(lobby, screenshot_path(tmp_path, "watch.png"))
    phone = await pages.open("/watch/show-1", width=375, height=740)
    await phone.wait_for_function("() => document.getElementById('board').dataset.fen !== undefined")
    assert await phone.evaluate("document.scrollingElement.scrollWidth <= innerWidth")  # no sideways scrolling
    north, south = [await phone.locator(f".store.{side}").bounding_box() for side in ("north", "south")]
    assert north and south and north["y"] + north["height"] <= south["y"]  # the board turned a quarter
    await phone.screenshot(path=str(tmp_path / "watch-phone.png"), full_page=True)
    await lobby.wait_for_function("() => document.getElementById('status').textContent.startsWith('Game over')",
                                  timeout=60_000)
    await host.expect("event", timeout=10, where=lambda m: is_game_over(m) and m["match_id"] == "show-1")
    record, fens = await fens_of(host, "show-1")
    shown = await lobby.evaluate("window.__values('board', 'data-fen')")
    assert shown == fens[fens.index(shown[0]):], "every position once, in order, to the end"
    assert shown[-1] == fens[-1] and await board_counts(lobby) == pits_of(fens[-1])
    items = await lobby.eval_on_selector_all("#moves li", "ns => ns.map(n => [n.dataset.fen, n.textContent])")
    assert [fen for fen, _ in items] == fens[1:]
    assert [re.sub(r"^[SN]", "", label).split()[0] for _, label in items] == record
    await lobby.goto(pages.base + "/")
    finished = lobby.locator("#recent tr[data-match='show-1']")
    await finished.wait_for(timeout=10_000)
    assert "replay" in await finished.inner_text()
    await host.close()


async def test_the_lobbys_links_name_their_games(arena: RunningServer, pages: Pages) -> None:
    """Each watch and replay link of the lobby's lists is named for its game ("watch bot:greedy v bot:random"),
    so a screen reader going from link to link tells them apart; the text shown stays one word."""
    host = await Client.open(arena.url, "host")
    for south, north in (("random", "greedy"), ("greedy", "alphabeta:2")):
        await host.send(type="exhibition", south=south, north=north)
        await host.expect("event", timeout=20, where=is_game_over)
    await host.request("snapshot", type="exhibition", south="greedy", north="random", pace_ms=2000, match_id="show-2")
    lobby = await pages.open("/")
    watch = lobby.get_by_role("link", name="watch bot:greedy v bot:random", exact=True)
    await watch.wait_for(timeout=10_000)
    assert await watch.inner_text() == "watch"
    for south, north in (("random", "greedy"), ("greedy", "alphabeta:2")):
        replay = lobby.get_by_role("link", name=f"replay bot:{south} v bot:{north}", exact=True)
        await replay.wait_for(timeout=10_000)
        assert await replay.inner_text() == "replay"
    await host.close()


async def test_the_watch_page_resumes_after_its_connection_drops(arena: RunningServer, pages: Pages) -> None:
    """The server drops the page's websocket mid-game: it says hello as the same guest, sends `sync` with the
    last event it holds, and goes on without losing or repeating a move; the running clock ticks."""
    host = await Client.open(arena.url, "host")
    await host.request("snapshot", type="exhibition", variant="kalah(6,4,clock=300+2)", south="greedy",
                       north="alphabeta:2", pace_ms=PACE_MS, match_id="drop-1")
    page = await pages.open("/watch/drop-1")
    await page.wait_for_function("() => document.getElementById('moves').children.length >= 4", timeout=20_000)
    running = page.locator(".clock.running")
    first = await running.inner_text()
    await page.wait_for_function("(t) => document.querySelector('.clock.running')?.textContent !== t", arg=first)
    guests = [s for peer in arena.admission.peers.values() for s in peer.sessions
              if (s.name or "").startswith("guest-")]
    assert len(guests) == 1
    held = await page.evaluate("Math.max(...window.__got.filter(m => m.type === 'event').map(m => m.seq))")
    assert guests[0].ws.transport is not None
    guests[0].ws.transport.abort()  # the connection is lost, as on a network failure
    await page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Game over')",
                                 timeout=60_000)
    record, fens = await fens_of(host, "drop-1")
    shown = await page.evaluate("window.__values('board', 'data-fen')")
    assert shown == fens[fens.index(shown[0]):], "no position lost or repeated across the drop"
    states = await page.evaluate("window.__values('link', 'data-state')")
    assert "reconnecting" in states and states[-1] == "ready"
    sent = await page.evaluate("window.__sent")
    hellos = [m for m in sent if m["type"] == "hello"]
    assert len(hellos) == 2 and hellos[1].get("token") and hellos[1]["name"] == hellos[0]["name"]
    assert [m["type"] for m in sent if m["type"] in ("watch", "sync")] == ["watch", "sync"]
    sync = next(m for m in sent if m["type"] == "sync")
    assert sync["since"] >= held and len(record) == len(fens) - 1
    assert sum(1 for m in await page.evaluate("window.__got") if m["type"] == "snapshot") == 1  # caught up
    await host.close()


async def test_replay_a_stored_game_both_ways(arena: RunningServer, pages: Pages) -> None:
    """/game/ID steps forward and back through every position of the stored record, jumps to a ply, shows the
    record to copy and the solver's value of a position (asking one position at a time)."""
    host = await Client.open(arena.url, "host")
    await host.send(type="exhibition", variant="kalah(6,4,pie=on)", south="greedy", north="alphabeta:2",
                    match_id="replay-1")
    await host.expect("event", timeout=20, where=is_game_over)
    record, fens = await fens_of(host, "replay-1")
    page = await pages.open("/game/replay-1")
    await wait_fen(page, fens[0])
    assert await page.input_value("#record") == " ".join(record)
    for fen in fens[1:]:
        await page.click("#forward")
        await wait_fen(page, fen)
    assert await board_counts(page) == pits_of(fens[-1])
    assert (await page.inner_text("#status")).startswith("Game over")
    for fen in reversed(fens[:-1]):
        await page.click("#back")
        await wait_fen(page, fen)
    middle = len(fens) // 2
    await page.fill("#ply-input", str(middle))
    await page.press("#ply-input", "Enter")
    await wait_fen(page, fens[middle])
    await page.click(f"#moves li[data-ply='{middle + 2}']")
    await wait_fen(page, fens[middle + 2])
    await page.keyboard.press("End")
    await wait_fen(page, fens[-1])
    await page.keyboard.press("Home")
    await wait_fen(page, fens[0])
    late = len(fens) - 5
    await page.goto(pages.base + f"/game/replay-1#ply={late}")
    await wait_fen(page, fens[late])
    shown = "(fen) => { const node = document.getElementById('analysis'); " \
            "return node.dataset.fen === fen && node.dataset.value !== undefined; }"
    await page.wait_for_function(shown, arg=fens[late], timeout=20_000)
    want = Analyst().analyse(Analyse(variant="kalah(6,4,pie=on)", position=fens[late], budget_ms=1000))
    assert want.exact and await page.get_attribute("#analysis", "data-exact") == "true"
    assert int(await page.get_attribute("#analysis", "data-value") or "") == want.value
    asked = [m["position"] for m in await page.evaluate("window.__sent") if m["type"] == "analyse"]
    assert fens[late] in asked  # the value shown is the server's answer (asked after the jump, or while stepping
    # through the moves if a step outlasted the page's settling delay, as on a busy machine)
    assert max(waiting(await page.evaluate("window.__log"))) == 1
    await host.close()


def waiting(log: list[list[str]]) -> list[int]:
    """How many analyses the page had asked and not had answered, after each message it sent or received."""
    out, open_ = [], 0
    for direction, kind, *about in log:
        if direction == "sent" and kind == "analyse":
            open_ += 1
        elif direction == "got" and (kind == "analysis" or (kind == "error" and about == ["analyse"])):
            open_ -= 1
        out.append(open_)
    return out


async def test_analysis_waits_its_turn_when_the_server_is_busy(arena: RunningServer, pages: Pages) -> None:
    """With the server's analysis queue full (`too_many`), the replay page asks again later, one at a time."""
    analyst = arena.router.analyst
    host = await Client.open(arena.url, "host")
    await host.send(type="exhibition", variant="kalah(4,3)", south="greedy", north="random", match_id="busy-1")
    await host.expect("event", timeout=20, where=is_game_over)
    _, fens = await fens_of(host, "busy-1")
    full, analyst.max_queued = analyst.max_queued, 0
    page = await pages.open("/game/busy-1#ply=1")
    await page.wait_for_function("() => window.__got.some(m => m.type === 'error' && m.code === 'too_many')",
                                 timeout=10_000)
    assert "busy" in await page.inner_text("#analysis")
    analyst.max_queued = full
    await page.wait_for_function("() => document.getElementById('analysis').dataset.value !== undefined",
                                 timeout=20_000)
    asked = [m for m in await page.evaluate("window.__sent") if m["type"] == "analyse"]
    assert len(asked) >= 2 and {m["position"] for m in asked} == {fens[1]}
    assert max(waiting(await page.evaluate("window.__log"))) == 1
    await host.close()


def random_records(variant: Variant, games: int, rng: random.Random) -> list[list[str]]:
    """Records of random legal games of a variant (to the end, or 300 plies), steered back to positions already
    seen when it can be, so that the repetition rule comes up too."""
    out = []
    for _ in range(games):
        game = Game(variant)
        seen = {game.position.key()}
        while not game.over and game.ply < 300:
            actions = game.position.legal_actions()
            back = [a for a in actions if game.position.apply(a).key() in seen]
            game.play(rng.choice(back or actions))
            seen.add(game.position.key())
        out.append(game.record().split())
    return out


TWIN_VARIANTS = ["kalah(6,4)", "kalah(4,3,capture=empty)", "kalah(5,5,capture=none,extra=off)",
                 "kalah(6,4,clockwise=on)", "kalah(4,4,relay=on)", "kalah(3,3,relay=on,clockwise=on)",
                 "kalah(6,4,leftover=emptier)", "kalah(5,3,leftover=discard)", "kalah(6,6,majority=on)",
                 "kalah(6,4,pie=on)", "kalah(4,3,transfer=on)", "kalah(5,4,pie=on,transfer=on,capture=empty)",
                 "kalah(1,1)", "kalah(2,1,transfer=on)", "kalah(12,24)", "kalah(3,2,relay=on,leftover=emptier)"]


async def test_the_pages_rules_are_the_servers_rules(pages: Pages) -> None:
    """kalah.js, the replay page's twin of protocol/, gives every position, path, capture, extra turn and end
    of random games in every kind of variant exactly as the Python rules do."""
    rng = random.Random(16)
    cases: list[dict[str, Any]] = [{"variant": v, "record": r}
                                   for v in TWIN_VARIANTS for r in random_records(Variant.parse(v), 12, rng)]
    page = await pages.open("/")
    got = await page.evaluate("""async (cases) => {
        const src = document.querySelector("script[type=module]").src.replace("index.js", "kalah.js");
        const k = await import(src);
        return cases.map((c) => k.replay(k.parseVariant(c.variant), c.record).map((s) => [s.position.fen(),
          s.event && [s.event.path, s.event.capture && [s.event.capture.bin, s.event.capture.seeds],
                      s.event.extraTurn, s.event.end]]));
    }""", cases)
    repetitions = 0
    for case, steps in zip(cases, got, strict=True):
        game = Game.from_record(Variant.parse(case["variant"]), " ".join(case["record"]))
        want: list[Any] = [[game.positions[0].fen(), None]]
        for pos, ev in zip(game.positions[1:], game.events, strict=True):
            capture = None if ev.capture is None else [ev.capture[0] + 1, ev.capture[1]]
            want.append([pos.fen(), [list(ev.path), capture, ev.extra_turn, None if ev.end is None else str(ev.end)]])
        assert steps == want, case
        repetitions += game.position.end == "repetition"
    assert repetitions > 0  # the repetition rule was exercised too


async def test_the_lobby_gives_the_explorer_and_puzzles_headings_of_their_own(arena: RunningServer,
                                                                                pages: Pages) -> None:
    """The lobby's Events section links to events only; the opening explorer and the puzzles each sit under a
    heading of their own, their links keeping their names."""
    lobby = await pages.open("/")
    events = lobby.get_by_role("region", name="Events", exact=True)
    await events.get_by_role("link", name="Arenas, Swiss tournaments and round-robins").wait_for(timeout=10_000)
    assert await events.get_by_role("link").count() == 1
    explorer = lobby.get_by_role("region", name="Opening explorer", exact=True)
    assert await explorer.get_by_role("heading", name="Opening explorer", exact=True).count() == 1
    await explorer.get_by_role("link", name="Opening explorer", exact=True).wait_for(timeout=10_000)
    puzzles = lobby.get_by_role("region", name="Puzzles", exact=True)
    await puzzles.get_by_role("link", name="Find the one move that keeps the value").wait_for(timeout=10_000)
    await explorer.get_by_role("link", name="Opening explorer", exact=True).click()
    await lobby.wait_for_url(re.compile(r"/explore(\?.*)?$"))
