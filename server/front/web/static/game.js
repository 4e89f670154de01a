// /game/MATCH: replay a stored game. The record comes from `game` (a public read); every position is
// rebuilt with the rules in kalah.js. The solver's value of the position shown is asked with `analyse`,
// one position at a time and only once it stays on screen (the server runs a few analyses at once in all).
// A finished game's review (`review`: each move's seeds lost against perfect play, made once by the server and
// stored) marks the moves, draws the value over the game and sums up each player; a mark jumps to the position
// before its move and shows the best move there.

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
const rv = { review: null, asked: false, retries: 0, timer: null, shown: null };
const MARKS = { inaccuracy: "?!", mistake: "?", blunder: "??" };
const SVG = "http://www.w3.org/2000/svg";

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
    if (!rv.review) rv.asked = false;  // an answer lost with the old connection is asked again
    askReview();
    askSoon();
  },
  onMessage(msg) {
    if (msg.type === "game_record" && msg.game.match_id === matchId) load(msg.game);
    else if (msg.type === "standings_table") {
      st.ratings = ratingsOf(msg);
      if (st.game) drawPlayers();
    } else if (msg.type === "analysis") analysed(msg);
    else if (msg.type === "game_review" && msg.match_id === matchId) reviewed(msg);
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
  askReview();
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
  drawReviewPlace();
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
  if (msg.request === "review") {
    reviewFailed(msg);
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

// --- the review ----------------------------------------------------------------------------------------

/** Ask for the review of a finished game, once per connection (the server makes it once and stores it). */
function askReview() {
  if (!st.game || st.game.status !== "finished" || !st.steps.length || rv.review || rv.asked || !net.ready) return;
  rv.asked = true;
  $("review").hidden = false;
  $("review-state").textContent = "Reviewing every move against perfect play…";
  net.send({ type: "review", match_id: matchId });
}

function reviewFailed(msg) {
  rv.asked = false;
  if ((msg.code === "too_many" || msg.code === "rate_limited") && rv.retries < MAX_RETRIES) {
    rv.retries += 1;
    $("review-state").textContent = "The server is busy: the review is asked again shortly…";
    clearTimeout(rv.timer);
    rv.timer = setTimeout(askReview, Math.max(msg.retry_ms || 0, 1000 * 2 ** rv.retries));
    return;
  }
  $("review-state").textContent = `No review: ${msg.message}`;
}

function lossWords(p) {
  const seeds = `${p.exact ? "" : "about "}${p.loss} seed${p.loss === 1 ? "" : "s"} lost`;
  return p.mark === "perfect" ? "a perfect move" : `${p.mark}, ${seeds}`;
}

function reviewed(review) {
  rv.review = review;
  rv.retries = 0;
  $("review").hidden = false;
  $("review-state").textContent = review.exact ? "Every figure is proved (books, databases, full searches)."
    : "Figures marked ~ are estimates from a depth-limited search, not proved.";
  for (const p of review.plies) {
    const item = $("moves").querySelector(`li[data-ply='${p.ply + 1}']`);
    if (!item) continue;
    item.dataset.mark = p.mark;
    item.dataset.loss = String(p.loss);
    if (!MARKS[p.mark]) continue;
    const button = document.createElement("button");
    button.type = "button";
    button.className = `mark ${p.mark}${p.exact ? "" : " estimate"}`;
    button.dataset.ply = String(p.ply);
    button.textContent = `${p.exact ? "" : "~"}${MARKS[p.mark]}`;
    button.setAttribute("aria-label", `Move ${p.ply + 1}, ${p.player || p.side} played ${p.action}: ${lossWords(p)}`
      + `${p.exact ? "" : " (an estimate)"}; show the position before it and the best move`);
    item.append(button);
  }
  $("review-players").replaceChildren(...review.players.map((s) => {
    const li = document.createElement("li");
    const worst = s.worst_ply === null ? "no seed given away"
      : `worst: move ${s.worst_ply + 1} (${s.worst_loss} seed${s.worst_loss === 1 ? "" : "s"})`;
    li.textContent = `${s.player || (s.seat ? "North" : "South")}: ${s.perfect} of ${s.moves} moves perfect, `
      + `${s.lost} seed${s.lost === 1 ? "" : "s"} given away, ${worst}${s.exact ? "" : " (some figures are estimates)"}.`;
    return li;
  }));
  const t = review.thresholds;
  $("review-legend").textContent = `Seeds lost: inaccuracy ${t.inaccuracy}+, mistake ${t.mistake}+, `
    + `blunder ${t.blunder}+ (scaled to the board's seeds).`;
  drawGraph(review);
  drawReviewPlace();
}

/** The value over the game: a bar per position, above the line when South wins under perfect play. */
function drawGraph(review) {
  const graph = $("review-graph");
  const values = review.plies.map((p) => ({ value: p.value, exact: p.exact }));
  const last = review.plies[review.plies.length - 1];
  if (last) values.push({ value: last.after, exact: last.exact });
  const top = Math.max(1, ...values.map((v) => Math.abs(v.value)));
  const width = Math.max(1, values.length);
  graph.setAttribute("viewBox", `0 0 ${width} 2`);
  const bars = values.map((v, ply) => {
    const bar = document.createElementNS(SVG, "rect");
    const h = Math.abs(v.value) / top;
    bar.setAttribute("x", String(ply + 0.1));
    bar.setAttribute("width", "0.8");
    bar.setAttribute("y", String(v.value >= 0 ? 1 - h : 1));
    bar.setAttribute("height", String(Math.max(h, 0.02)));
    bar.setAttribute("class", `bar ${v.value >= 0 ? "south" : "north"}${v.exact ? "" : " estimate"}`);
    bar.dataset.ply = String(ply);
    bar.dataset.value = String(v.value);
    return bar;
  });
  const axis = document.createElementNS(SVG, "line");
  Object.entries({ x1: "0", x2: String(width), y1: "1", y2: "1", class: "axis" }).forEach(([k, v]) => axis.setAttribute(k, v));
  graph.replaceChildren(axis, ...bars);
}

/** Mark the position shown on the graph, and the best move when it is the position before a marked move. */
function drawReviewPlace() {
  for (const bar of $("review-graph").querySelectorAll(".bar")) {
    bar.classList.toggle("current", Number(bar.dataset.ply) === st.ply);
  }
  for (const node of $("board").querySelectorAll(".best")) node.classList.remove("best");
  const p = rv.review && rv.shown === st.ply ? rv.review.plies.find((q) => q.ply === st.ply) : null;
  if (!p) {
    $("review-note").textContent = "";
    delete $("review-note").dataset.ply;
    return;
  }
  for (const token of p.best) $("board").querySelector(`[data-bin='${token}']`)?.classList.add("best");
  const best = p.best.length ? `best was ${p.best.join(" or ")}` : "no best move was looked for";
  $("review-note").dataset.ply = String(p.ply);
  $("review-note").textContent = `Move ${p.ply + 1}: ${p.player || p.side} played ${p.action}, ${lossWords(p)}`
    + `${p.exact ? "" : " (an estimate)"}; ${best} (marked on the board).`;
}

function showMark(ply) {
  rv.shown = ply;
  go(ply, false);
}

// --- controls -----------------------------------------------------------------------------------------------

$("first").addEventListener("click", () => go(0, false));
$("back").addEventListener("click", () => go(st.ply - 1, false));
$("forward").addEventListener("click", () => go(st.ply + 1, true));
$("last").addEventListener("click", () => go(st.steps.length - 1, false));
$("ply-range").addEventListener("input", (e) => go(Number(e.target.value), false));
$("ply-input").addEventListener("change", (e) => go(Number(e.target.value), false));
$("moves").addEventListener("click", (e) => {
  const mark = e.target.closest("button.mark");
  if (mark) {
    showMark(Number(mark.dataset.ply));
    return;
  }
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
