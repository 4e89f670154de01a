// /game/MATCH: replay a stored game. The record comes from `game` (a public read); every position is
// rebuilt with the rules in kalah.js. The solver's value of the position shown is asked with `analyse`,
// one position at a time and only once it stays on screen (the server runs a few analyses at once in all).

import { BoardView } from "./board.js";
import { parseVariant, replay } from "./kalah.js";
import { Link } from "./net.js";
import {
  copyField, matchIdFromPath, moveItem, moveWords, nameWithRating, outcomeText, ratingsOf, showLinkState,
} from "./ui.js";

const matchId = matchIdFromPath();
const $ = (id) => document.getElementById(id);
const BUDGET_MS = 1000;
const SETTLE_MS = 300;
const MAX_RETRIES = 5;

const st = { game: null, v: null, steps: [], ply: 0, board: null, ratings: new Map(), asked: false };
const an = { cache: new Map(), inFlight: null, timer: null, retries: 0 };

const net = new Link({
  onReady() {
    an.inFlight = null;  // an answer lost with the old connection is asked again
    if (!st.asked) {
      st.asked = true;
      net.send({ type: "game", match_id: matchId });
      net.send({ type: "standings", limit: 200 });
    } else if (!st.game) {
      net.send({ type: "game", match_id: matchId });
    }
    askSoon();
  },
  onMessage(msg) {
    if (msg.type === "game_record" && msg.game.match_id === matchId) load(msg.game);
    else if (msg.type === "standings_table") {
      st.ratings = ratingsOf(msg);
      if (st.game) drawPlayers();
    } else if (msg.type === "analysis") analysed(msg);
    else if (msg.type === "error") failed(msg);
  },
  onState: showLinkState,
});

function load(game) {
  st.game = game;
  st.v = parseVariant(game.variant);
  try {
    st.steps = replay(st.v, game.record);
  } catch (err) {
    $("status").textContent = `This record cannot be replayed here: ${err.message}`;
    return;
  }
  st.board = new BoardView($("board"), st.v);
  const n = st.steps.length - 1;
  for (const id of ["ply-range", "ply-input"]) $(id).max = String(n);
  $("moves").replaceChildren(...st.steps.slice(1).map((step) => moveItem(step.event, step.position.fen())));
  $("record").value = game.record.join(" ");
  $("title").textContent = `${game.south || "?"} v ${game.north || "?"}`;
  const finished = game.reason ? `${outcomeText(game.winner, game.result, game.reason)}` : game.status;
  $("meta").textContent = `${game.variant} · ${n} plies · ${finished} · match ${matchId}`;
  go(plyInAddress() ?? 0, false);
}

/** The ply the address names (`#ply=12`), or null. */
function plyInAddress() {
  const wanted = /^#ply=(\d+)$/.exec(location.hash);
  return wanted ? Number(wanted[1]) : null;
}

/** Show ply `ply` (0: the start); `animate` sows the move that led there. */
function go(ply, animate) {
  if (!st.board) return;
  const n = st.steps.length - 1;
  ply = Math.max(0, Math.min(n, ply));
  const step = st.steps[ply];
  if (animate && ply === st.ply + 1 && step.event) {
    const perSeed = Math.min(50, 500 / Math.max(1, step.event.path.length));
    st.board.animate(st.steps[ply - 1].position, step.event, step.position, perSeed);
  } else {
    st.board.show(step.position, step.event);
  }
  st.ply = ply;
  $("ply-range").value = $("ply-input").value = String(ply);
  $("ply-out").textContent = `${ply} of ${n}`;
  for (const item of $("moves").children) item.classList.toggle("current", Number(item.dataset.ply) === ply);
  const current = $("moves").querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
  history.replaceState(null, "", ply ? `#ply=${ply}` : location.pathname);
  drawPlayers();
  drawStatus();
  drawAnalysis();
  askSoon();
}

function namesAt(position) {
  const g = st.game;
  return position.swapped ? { south: g.north, north: g.south } : { south: g.south, north: g.north };
}

function drawPlayers() {
  const position = st.steps[st.ply].position;
  const names = namesAt(position);
  for (const side of ["south", "north"]) {
    const row = $(`player-${side}`);
    row.querySelector(".name").textContent = nameWithRating(names[side], st.ratings);
    const toMove = !position.end && position.toMove === (side === "south" ? 0 : 1);
    row.classList.toggle("to-move", toMove);
    row.querySelector(".turn").textContent = toMove ? "to move" : "";
  }
}

function drawStatus() {
  const { position, event } = st.steps[st.ply];
  $("note").textContent = event ? moveWords(event) : "The starting position.";
  const n = st.steps.length - 1;
  if (st.ply === n && st.game.reason) {
    $("status").textContent = `Game over. ${outcomeText(st.game.winner, st.game.result, st.game.reason)}.`;
  } else if (position.end) {
    $("status").textContent = "The board ended the game here.";
  } else {
    $("status").textContent = `${position.toMove === 0 ? "South" : "North"} to move.`;
  }
}

// --- the solver's values ---------------------------------------------------------------------------------

function valueWords(value) {
  if (value > 0) return `South wins by ${value}`;
  if (value < 0) return `North wins by ${-value}`;
  return "a draw";
}

function drawAnalysis() {
  const node = $("analysis");
  const position = st.steps[st.ply].position;
  const fen = position.fen();
  const found = an.cache.get(fen);
  node.dataset.fen = fen;
  if (!found) {
    delete node.dataset.value;
    node.textContent = "Solver: …";
    return;
  }
  if (found.none) {
    delete node.dataset.value;
    node.textContent = `Solver: ${found.none}`;
    return;
  }
  node.dataset.value = String(found.value);
  node.dataset.exact = String(found.exact);
  const best = found.best && found.best.length ? `; best move ${found.best.join(" ")}` : "";
  node.textContent = found.exact ? `Solver: ${valueWords(found.value)} with perfect play${best}.`
    : `Solver estimate: ${valueWords(found.value)} (search depth ${found.depth})${best}.`;
}

function askSoon(delay = SETTLE_MS) {
  clearTimeout(an.timer);
  an.timer = setTimeout(ask, delay);
}

/** Ask the value of the position shown, unless known or already asked: one request at a time. */
function ask() {
  if (!st.board || !net.ready || an.inFlight !== null) return;
  const position = st.steps[st.ply].position;
  const fen = position.fen();
  if (an.cache.has(fen)) return;
  if (position.end) {
    an.cache.set(fen, { value: position.margin, exact: true, depth: 0, best: [] });
  } else if (position.transferPending || !position.legalBins().length) {
    an.cache.set(fen, { none: "no value while the opening transfer is due" });
  } else {
    an.inFlight = fen;
    net.send({ type: "analyse", variant: st.game.variant, position: fen, budget_ms: BUDGET_MS });
    drawAnalysis();
    return;
  }
  drawAnalysis();
}

function analysed(msg) {
  an.cache.set(msg.position, msg);
  an.inFlight = null;
  an.retries = 0;
  drawAnalysis();
  askSoon(0);
}

function failed(msg) {
  if (msg.request === "game") {
    if (msg.code !== "unknown_match") {
      $("status").textContent = msg.message;
      return;
    }
    // an unknown game: only the message and a way back (no empty board, no controls, no record to copy)
    $("game").hidden = true;
    $("moves-section").hidden = true;
    $("missing").hidden = false;
    $("title").textContent = "No such game";
    $("missing-text").textContent = `No stored game ${matchId}.`;
    return;
  }
  if (msg.request !== "analyse" || an.inFlight === null) return;
  const fen = an.inFlight;
  an.inFlight = null;
  if ((msg.code === "too_many" || msg.code === "rate_limited") && an.retries < MAX_RETRIES) {
    an.retries += 1;
    $("analysis").textContent = "Solver: the server is busy, asking again shortly…";
    askSoon(1000 * 2 ** an.retries);
    return;
  }
  an.retries = 0;
  an.cache.set(fen, { none: msg.code === "too_many" ? "the server is busy: no value for now" : msg.message });
  drawAnalysis();
}

// --- controls -----------------------------------------------------------------------------------------------

$("first").addEventListener("click", () => go(0, false));
$("back").addEventListener("click", () => go(st.ply - 1, false));
$("forward").addEventListener("click", () => go(st.ply + 1, true));
$("last").addEventListener("click", () => go(st.steps.length - 1, false));
$("ply-range").addEventListener("input", (e) => go(Number(e.target.value), false));
$("ply-input").addEventListener("change", (e) => go(Number(e.target.value), false));
$("moves").addEventListener("click", (e) => {
  const item = e.target.closest("li[data-ply]");
  if (item) go(Number(item.dataset.ply), false);
});
document.addEventListener("keydown", (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement) return;
  const moves = { ArrowLeft: () => go(st.ply - 1, false), ArrowRight: () => go(st.ply + 1, true),
    Home: () => go(0, false), End: () => go(st.steps.length - 1, false) };
  if (moves[e.key]) {
    e.preventDefault();
    moves[e.key]();
  }
});
window.addEventListener("hashchange", () => {
  const ply = plyInAddress();
  if (ply !== null && ply !== st.ply) go(ply, false);
});
$("copy").addEventListener("click", () => copyField($("record"), $("copied")));
net.start();
