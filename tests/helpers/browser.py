"""Pages of a test's server in a real headless browser (Playwright with the system's Chromium), and what the
browser tests do and read on them: every message a page sent and received, every position its board showed,
script errors and CSP violations; starting games from the lobby and playing them out.

The browser tests are skipped, with the reason, when playwright or Chromium is missing, unless
KALAH_REQUIRE_BROWSER=1 (CI), which makes them fail instead: `tests/install-test-deps.sh` installs both.
KALAH_CHROMIUM names another Chromium; KALAH_WEB_SCREENSHOTS=DIR writes the pages' screenshots there (`docs/`
for the README's pictures). The `browser` and `pages` fixtures are in tests/conftest.py (a Chromium a test);
tests/server/web/conftest.py shares one a module (`ContextsOf`), each test's contexts closed after it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from protocol import Game, Variant
from server.assembly import RunningServer
from tests.helpers.wire import Client

CHROMIUM = os.environ.get("KALAH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
REQUIRED = os.environ.get("KALAH_REQUIRE_BROWSER") == "1"


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed (pip install -e '.[test]'; see tests/install-test-deps.sh)"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (tests/install-test-deps.sh installs it; KALAH_CHROMIUM names another)"
    return None


MISSING = _missing()
SKIP = pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=f"browser tests: {MISSING}")
"""Every browser test module's mark (`pytestmark = SKIP`)."""

SPY = """
(() => {
  // what the tests read: every value an attribute took, every message sent and received, CSP violations
  window.__olds = {}; window.__sent = []; window.__got = []; window.__log = []; window.__violations = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      window.__socket = this;
      // window.__hold = true keeps the page from seeing incoming messages until window.__release()
      const add = this.addEventListener.bind(this);
      this.addEventListener = (type, listener, ...rest) => {
        if (type !== "message") return add(type, listener, ...rest);
        return add(type, (e) => {
          if (!window.__hold) return listener(e);
          (window.__held = window.__held || []).push(() => listener(e));
        }, ...rest);
      };
      this.addEventListener("message", (e) => {
        const msg = JSON.parse(e.data);
        window.__got.push(msg);
        window.__log.push(["got", msg.type, msg.request]);
      });
    }
    send(data) {
      const msg = JSON.parse(data);
      window.__sent.push(msg);
      window.__log.push(["sent", msg.type]);
      return super.send(data);
    }
  };
  window.__release = () => {
    window.__hold = false;
    for (const deliver of (window.__held || []).splice(0)) deliver();
  };
  document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective));
  const follow = (id, attr) => {
    const node = document.getElementById(id);
    if (!node) return;
    const olds = (window.__olds[`${id}.${attr}`] = []);
    new MutationObserver((records) => { for (const r of records) olds.push(r.oldValue); })
      .observe(node, { attributes: true, attributeFilter: [attr], attributeOldValue: true });
  };
  window.__values = (id, attr) => {
    const node = document.getElementById(id);
    const now = node.getAttribute(attr);
    return (window.__olds[`${id}.${attr}`] || []).filter((v) => v !== null).concat(now === null ? [] : [now]);
  };
  document.addEventListener("DOMContentLoaded", () => { follow("board", "data-fen"); follow("link", "data-state"); });
})();
"""


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A headless Chromium, closed on every path (fails when KALAH_REQUIRE_BROWSER=1 and it cannot start)."""
    if MISSING is not None:
        pytest.fail(f"KALAH_REQUIRE_BROWSER=1 but {MISSING}")
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


class ContextsOf:
    """One test's view of a Chromium shared by several tests: the contexts it opens (`new_context`) are closed at
    the test's end (`close`), the browser itself stays up for the next test."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.contexts: list[Any] = []

    async def new_context(self, **options: Any) -> Any:
        """A new context of the shared browser (its own cookies, storage and cache), closed with this test."""
        context = await self.browser.new_context(**options)
        self.contexts.append(context)
        return context

    async def close(self) -> None:
        """Close every context this test opened (their pages with them)."""
        for context in self.contexts:
            await context.close()


class Pages:
    """Opens pages of one server in the browser, each watched for script errors and CSP violations."""

    def __init__(self, browser: Any, server: RunningServer | str) -> None:
        """Pages of `server`, or of the server at the address `server` (`http://host:port`)."""
        self.browser = browser
        self.base = server if isinstance(server, str) else f"http://{server.host}:{server.port}"
        self.opened: list[tuple[Any, list[str]]] = []

    async def open(self, path: str, width: int = 1280, height: int = 860, touch: bool = False,
                   context: Any = None, mobile: bool = False) -> Any:
        """A new page at `path`, `width` x `height` CSS pixels: a new guest (its own storage), or another tab of
        `context`'s guest; `touch`: a touch screen; `mobile`: a phone's browser (its viewport tag taken)."""
        if context is None:
            context = await self.browser.new_context(viewport={"width": width, "height": height}, has_touch=touch,
                                                     is_mobile=mobile)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
        page.on("console", lambda msg: errors.append(f"console: {msg.text}")
                if msg.type == "error" and "WebSocket" not in msg.text else None)
        await page.add_init_script(SPY)
        await page.goto(self.base + path)
        self.opened.append((page, errors))
        return page

    async def check(self) -> None:
        """No page had a script error, a console error (a dropped websocket aside) or a CSP violation (a closed
        page: no script error while it was open)."""
        for page, errors in self.opened:
            violations = [] if page.is_closed() else await asyncio.wait_for(page.evaluate("window.__violations"), 30)
            assert errors == [] and violations == [], (errors, violations)


async def fens_of(host: Client, match_id: str) -> tuple[list[str], list[str]]:
    """The server's stored record of a match and every position of it (start included), from `game`."""
    game = (await host.request("game_record", type="game", match_id=match_id))["game"]
    replay = Game.from_record(Variant.parse(game["variant"]), " ".join(game["record"]))
    return game["record"], [p.fen() for p in replay.positions]


async def wait_fen(page: Any, fen: str) -> None:
    """Wait until the board shows `fen` (after its sowing is drawn)."""
    await page.wait_for_function("(fen) => document.getElementById('board').dataset.fen === fen", arg=fen,
                                 timeout=10_000)


def screenshot_path(tmp_path: Path, name: str) -> Path:
    """Where a screenshot goes: KALAH_WEB_SCREENSHOTS if set (e.g. docs/ for the README), else the test's folder."""
    folder = os.environ.get("KALAH_WEB_SCREENSHOTS")
    return (Path(folder) if folder else tmp_path) / name


STILL = "() => !document.querySelector('.pit.hit') && document.getElementById('board').dataset.fen"


async def still_screenshot(page: Any, path: Path) -> None:
    """A screenshot of the board between two sowings (taken again if one began meanwhile)."""
    for _ in range(20):
        fen = await (await page.wait_for_function(STILL)).json_value()
        await page.screenshot(path=str(path))
        if await page.evaluate(STILL) == fen:
            return
    raise AssertionError("the board never stood still")


# --- playing on the match page ---------------------------------------------------------------

PLAYABLE = "#board button.pit:not([disabled])"
OVER = "() => document.getElementById('status').textContent.startsWith('Game over')"
READY_OR_OVER = f"""() => document.getElementById('status').textContent.startsWith('Game over')
    || document.querySelector("{PLAYABLE}") !== null"""


async def start_from_lobby(page: Any, opponent: str = "greedy", variant: dict[str, str] | None = None,
                           seat: str = "south") -> str:
    """Start a game from the lobby's form (a bot game, or an open match when `opponent` is ""); its match id."""
    await page.wait_for_function("() => document.getElementById('link').dataset.state === 'ready'")
    await page.select_option("#opponent", opponent)
    for field, value in (variant or {}).items():
        if field in ("pie", "transfer"):
            await page.set_checked(f"#{field}", value == "on")
        elif field == "capture":
            await page.select_option("#capture", value)
        else:
            await page.fill(f"#{field}", value)
    await page.select_option("#seat", seat)
    await page.click("#play")
    await page.wait_for_url("**/play/*")
    await page.wait_for_function("() => document.getElementById('board').dataset.fen !== undefined")
    return str(page.url.rsplit("/", 1)[1])


async def playable(page: Any) -> list[int]:
    """The bins whose house buttons react now."""
    bins = await page.eval_on_selector_all(PLAYABLE, "nodes => nodes.map(n => Number(n.dataset.bin))")
    return [int(b) for b in bins]


async def my_turn(page: Any, timeout: float = 30_000) -> list[int]:
    """Wait until this page may move (its playable bins) or the game is over (no bins)."""
    await page.wait_for_function(READY_OR_OVER, timeout=timeout)
    if await page.evaluate(OVER):
        return []
    return await playable(page)


async def assert_shown_is_record(page: Any, host: Client, match_id: str) -> list[str]:
    """Every position the board showed, in order, is the server's record's, to its end; the record."""
    await host_wait_finished(host, match_id)
    record, fens = await fens_of(host, match_id)
    shown = await page.evaluate("window.__values('board', 'data-fen')")
    assert shown == fens[fens.index(shown[0]):], "every position once, in order, to the end"
    assert shown[-1] == fens[-1]
    return record


async def host_wait_finished(host: Client, match_id: str) -> None:
    """Wait until the server has stored the match as finished."""
    for _ in range(100):
        game = (await host.request("game_record", type="game", match_id=match_id))["game"]
        if game["status"] == "finished":
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{match_id} never finished")


async def play_out(players: list[Any], pick: int = 0, tap: bool = False, shot: Path | None = None) -> int:
    """Play the game on these pages to its end, each page moving when its houses react (by clicks, or taps):
    the `pick`-th playable house (counting from the last when negative). Returns the number of moves made."""
    moves = 0
    idle = 0
    while not all([await page.evaluate(OVER) for page in players]):
        for page in players:
            bins = await playable(page)
            if not bins:
                continue
            house = page.locator(f"#board .pit[data-bin='{bins[pick % len(bins)]}']")
            if tap:
                await house.tap()
            else:
                await house.click()
            moves += 1
            idle = 0
            if shot is not None and moves == 9:
                await page.set_viewport_size({"width": 1100, "height": 560})
                await still_screenshot(page, shot)
            break
        else:  # no page may move: a move is being drawn or confirmed, or a bot thinks
            idle += 1
            assert idle < 1500, "no page could move for 30 s"
            await players[0].wait_for_timeout(20)
    return moves
