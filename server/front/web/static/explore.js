// /explore: the opening explorer. The board starts at a variant's start (or `?position=`), a house or a move of
// the table plays that move (the rules in kalah.js), and each position shown is asked with `explore` (a public
// read): the moves played from it in the server's stored games, how they went for the mover, the movers' average
// rating and the solver's value after each move, with the solver's move. The address keeps the variant, the
// moves made and the filters (`?variant=kalah(6,4)&moves=3 6`), so a position can be linked to.

import { BoardView } from "./board.js";
import { parseVariant, Position } from "./kalah.js";
import { Link } from "./net.js";
import { cell, el, link, showLinkState } from "./ui.js";

const $ = (id) => document.getElementById(id);
const st = { v: null, variant: "kalah(6,4)", root: null, line: [], positions: [], board: null, asked: null };

const net = new Link({
  onReady() {
    st.asked = null;  // an answer lost with the old connection is asked again
    ask();
  },
  onMessage(msg) {
    if (msg.type === "explored") explored(msg);
    else if (msg.type === "error" && msg.request === "explore") {
      st.asked = null;
      $("state").textContent = `The server refused: ${msg.message}`;
    }
  },
  onState: showLinkState,
});

/** The position shown (the last of the line). */
function current() {
  return st.positions[st.positions.length - 1];
}

/** Start over at the variant and position the form and the address name, playing `moves` from there. */
function begin(variant, fen, moves) {
  let v;
  let root;
  try {
    v = parseVariant(variant);
    root = fen ? Position.fromFen(v, fen) : Position.initial(v);
  } catch (err) {
    $("filter-problem").textContent = `${err.message}: name a variant such as kalah(6,4), and a position in the `
      + "position notation.";
    return false;
  }
  $("filter-problem").textContent = "";
  Object.assign(st, { v, variant, root, line: [], positions: [root] });
  st.board = new BoardView($("board"), v, (bin) => play(String(bin)));
  for (const token of moves) {
    try {
      play(token, false);
    } catch {
      break;
    }
  }
  return true;
}

/** Play one move from the position shown; throws on a move the rules refuse there. */
function play(token, show = true) {
  const [after] = current().apply(token);
  st.line.push(token);
  st.positions.push(after);
  if (show) draw();
}

/** Back `count` moves (all of them with Infinity). */
function back(count) {
  const keep = Math.max(0, st.line.length - count);
  st.line.length = keep;
  st.positions.length = keep + 1;
  draw();
}

function filters() {
  const number = (id) => ($(id).value === "" ? null : Number($(id).value));
  const player = $("player").value.trim();
  return { rated: $("rated").checked, min_rating: number("min-rating"), max_rating: number("max-rating"),
    player: player || null, movers: $("movers").value };
}

/** The address of the position shown and the filters (replacing the current one). */
function remember() {
  const q = new URLSearchParams({ variant: st.variant });
  if (st.root.fen() !== Position.initial(st.v).fen()) q.set("position", st.root.fen());
  if (st.line.length) q.set("moves", st.line.join(" "));
  const f = filters();
  if (f.rated) q.set("rated", "1");
  if (f.min_rating !== null) q.set("min_rating", String(f.min_rating));
  if (f.max_rating !== null) q.set("max_rating", String(f.max_rating));
  if (f.player) q.set("player", f.player);
  if (f.movers !== "any") q.set("movers", f.movers);
  history.replaceState(null, "", `/explore?${q}`);
}

function draw() {
  const position = current();
  st.board.show(position, null);
  st.board.setPlayable(new Set(position.legalBins()));
  for (const side of ["south", "north"]) {
    const toMove = !position.end && position.toMove === (side === "south" ? 0 : 1);
    $(`player-${side}`).classList.toggle("to-move", toMove);
    $(`player-${side}`).querySelector(".turn").textContent = toMove ? "to move" : "";
  }
  $("meta").textContent = `${st.variant} · ${st.line.length ? `after ${st.line.join(" ")}` : "the start"}`;
  $("line").textContent = position.end ? "The game is over here." : "";
  $("start").disabled = $("back").disabled = st.line.length === 0;
  $("solver").textContent = "";
  $("explored").tBodies[0].replaceChildren();
  $("games").replaceChildren();
  $("state").textContent = "asking…";
  remember();
  ask();
}

/** Ask the server about the position shown (once per position and filters). */
function ask() {
  if (!st.v || !net.ready) return;
  const request = { type: "explore", variant: st.variant, position: current().fen(), values: true, ...filters() };
  const key = JSON.stringify(request);
  if (st.asked === key) return;
  st.asked = key;
  net.send(request);
}

const percent = (part, games) => `${Math.round((100 * part) / games)}%`;

function valueText(value, exact) {
  if (value === null || value === undefined) return "–";
  return `${exact ? "" : "~"}${value > 0 ? "+" : ""}${value}`;
}

function explored(msg) {
  if (msg.position !== current().fen()) return;  // an answer about a position left since
  const rows = msg.moves.map((m) => {
    const button = el("button", "explore-move", m.action);
    button.type = "button";
    button.setAttribute("aria-label", `Play ${m.action}: ${m.games} game${m.games === 1 ? "" : "s"}`);
    button.addEventListener("click", () => playListed(m.action));
    const tr = el("tr");
    tr.dataset.action = m.action;
    if (m.action === msg.solver) tr.classList.add("solver");
    tr.append(cell("move", button), cell("games", String(m.games)),
      cell("win · draw · loss", `${percent(m.wins, m.games)} · ${percent(m.draws, m.games)} · ${percent(m.losses, m.games)}`),
      cell("rating", m.average_rating === null ? "–" : String(m.average_rating)),
      cell("value", valueText(m.value, m.exact)));
    return tr;
  });
  $("explored").tBodies[0].replaceChildren(...rows);
  $("state").textContent = msg.games ? `${msg.games} game${msg.games === 1 ? "" : "s"} went on from here.`
    : "No stored game played a move from this position.";
  const seen = new Set();
  const games = [];
  for (const m of msg.moves) {
    if (!m.last_match || seen.has(m.last_match)) continue;
    seen.add(m.last_match);
    const item = el("li");
    item.append(link(`/game/${encodeURIComponent(m.last_match)}`, `${m.last_match}`), ` (the last to play ${m.action})`);
    games.push(item);
  }
  $("games").replaceChildren(...games);
  for (const pit of $("board").querySelectorAll(".best")) pit.classList.remove("best");
  if (msg.value === null || msg.value === undefined) {
    $("solver").textContent = current().end ? "" : "Not valued now (the solver is busy): ask again later.";
    return;
  }
  const how = msg.exact ? "proved" : `estimate, search depth ${msg.depth}`;
  $("solver").textContent = `Value ${valueText(msg.value, msg.exact)} (${how})`
    + (msg.solver ? `; the solver plays ${msg.solver}.` : ".");
  const best = msg.solver && /^\d+$/.test(msg.solver) ? $("board").querySelector(`[data-bin="${msg.solver}"]`) : null;
  if (best) best.classList.add("best");
}

/** Play a move of the table (a swap or a transfer too). */
function playListed(token) {
  try {
    play(token);
  } catch (err) {
    $("line").textContent = `${token} cannot be played here: ${err.message}`;
  }
}

$("start").addEventListener("click", () => back(Infinity));
$("back").addEventListener("click", () => back(1));
$("filters").addEventListener("submit", (e) => {
  e.preventDefault();
  const variant = $("variant").value.trim() || "kalah(6,4)";
  if (variant !== st.variant) {
    if (begin(variant, null, [])) draw();
    return;
  }
  draw();
});

const q = new URLSearchParams(location.search);
$("variant").value = q.get("variant") || "kalah(6,4)";
$("rated").checked = q.get("rated") === "1";
$("min-rating").value = q.get("min_rating") || "";
$("max-rating").value = q.get("max_rating") || "";
$("player").value = q.get("player") || "";
$("movers").value = ["people", "bots"].includes(q.get("movers")) ? q.get("movers") : "any";
if (!begin($("variant").value, q.get("position"), (q.get("moves") || "").split(" ").filter(Boolean))) {
  begin("kalah(6,4)", null, []);
}
draw();
net.start();
