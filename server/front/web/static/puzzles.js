// /puzzles and /puzzle/ID: solve puzzles whose answers are proved. `puzzle` asks the server for one (the one in the
// address, else the proved one nearest this player's puzzle rating not tried yet) without its answer; a click on a
// house sends `puzzle_answer`, and the server says right or wrong with every move's proved value, what it lost and
// the best play after it (a wrong move's refutation). A player's first answer to a puzzle is rated.

import { BoardView, houseOfKey } from "./board.js";
import { NORTH, SOUTH, parseVariant, Position } from "./kalah.js";
import { Link } from "./net.js";
import { el, say, showIdentity, showLinkState } from "./ui.js";

const $ = (id) => document.getElementById(id);
const st = { wanted: idInAddress(), shown: null, v: null, position: null, board: null, answered: false,
  asked: false, pending: null };

const net = new Link({
  onReady() {
    showIdentity(net.guest);
    if (!st.shown && !st.asked) ask();
    else if (st.shown && st.pending) net.send(st.pending);  // an answer lost with the old connection
  },
  onMessage(msg) {
    if (msg.type === "puzzle_shown") shown(msg);
    else if (msg.type === "puzzle_result" && st.shown && msg.puzzle_id === st.shown.id) result(msg);
    else if (msg.type === "error" && (msg.request === "puzzle" || msg.request === "puzzle_answer")) refused(msg);
  },
  onState: showLinkState,
});

/** The puzzle id the address names (`/puzzle/ID`), or null. */
function idInAddress() {
  const m = /^\/puzzle\/([A-Za-z0-9_-]{1,32})$/.exec(location.pathname);
  return m ? m[1] : null;
}

function ask() {
  st.asked = true;
  st.pending = null;
  $("error").textContent = "";
  const msg = { type: "puzzle" };
  if (st.wanted) msg.puzzle_id = st.wanted;
  const variant = $("variant").value.trim();
  if (!st.wanted && variant) msg.variant = variant;
  net.sendOrSay(msg, $("error"));
}

function sideName(side) {
  return side === SOUTH ? "South" : "North";
}

/** A bin as the player at the board says it: "house K" of the side to move. */
function houseText(bin) {
  const h = st.v.houses;
  return `house ${bin <= h ? bin : bin - h - 1}`;
}

function signed(value) {
  return value > 0 ? `+${value}` : String(value);
}

function shown(msg) {
  st.shown = msg;
  st.asked = false;
  st.wanted = null;
  st.answered = false;
  st.v = parseVariant(msg.variant);
  st.position = Position.fromFen(st.v, msg.position);
  st.board = new BoardView($("board"), st.v, choose);
  const side = st.position.toMove;
  st.board.setViewer(side);
  st.board.show(st.position, null);
  st.board.setPlayable(new Set(st.position.legalBins()));
  for (const s of ["south", "north"]) {
    const row = $(`player-${s}`);
    const toMove = (s === "south" ? SOUTH : NORTH) === side;
    row.classList.toggle("to-move", toMove);
    row.querySelector(".name").textContent = toMove ? "you" : "";
    row.querySelector(".turn").textContent = toMove ? "to move" : "";
  }
  $("title").textContent = `Puzzle ${msg.id}`;
  $("meta").textContent = `${msg.variant} · rated ${Math.round(msg.rating)} · played ${msg.plays} time${msg.plays === 1 ? "" : "s"}`;
  say($("prompt"), `${sideName(side)} to move: find the one move that keeps the value (click a house or press its key).`);
  $("verdict").textContent = "";
  $("verdict").className = "puzzle-verdict";
  $("refutation").textContent = "";
  $("ratings").textContent = msg.player_rating === null ? "" : `Your puzzle rating: ${Math.round(msg.player_rating)}.`;
  $("values-section").hidden = true;
  $("themes").textContent = msg.themes.length ? `Themes: ${msg.themes.join(", ").replaceAll("_", " ")}.` : "";
  $("permalink").href = `/puzzle/${msg.id}`;
  history.replaceState(null, "", `/puzzle/${msg.id}`);
}

function choose(bin) {
  if (!st.shown || st.answered) return;
  st.answered = true;
  st.board.setPlayable(new Set());
  const [after, event] = st.position.apply(String(bin));
  st.board.show(after, event);
  say($("prompt"), `You played ${houseText(bin)}; checking…`);
  st.pending = { type: "puzzle_answer", puzzle_id: st.shown.id, action: String(bin) };
  net.sendOrSay(st.pending, $("error"));
}

function lineText(position, line) {
  const words = [];
  let pos = position;
  for (const token of line) {
    const who = sideName(pos.toMove);
    const h = st.v.houses;
    const bin = Number(token);
    words.push(`${who} ${bin <= h ? bin : bin - h - 1}`);
    try {
      [pos] = pos.apply(token);
    } catch {
      break;
    }
  }
  return words.join(", ") || "the game ends";
}

function result(msg) {
  st.pending = null;
  const played = msg.played;
  const [after] = st.position.apply(played.action);
  const verdict = $("verdict");
  if (msg.correct) {
    verdict.textContent = `Right: ${houseText(Number(played.action))} keeps the value, ${signed(msg.value)} for South.`;
    verdict.className = "puzzle-verdict right";
    $("refutation").textContent = `Then: ${lineText(after, played.line)}.`;
  } else {
    verdict.textContent = `Wrong: ${houseText(Number(played.action))} loses ${played.loss} seed${played.loss === 1 ? "" : "s"} `
      + `(${signed(played.value)} for South instead of ${signed(msg.value)}). The answer was ${houseText(Number(msg.answer))}.`;
    verdict.className = "puzzle-verdict wrong";
    $("refutation").textContent = `Refutation: ${lineText(after, played.line)}.`;
  }
  say($("prompt"), msg.correct ? "Solved." : "Not solved.");
  for (const s of ["south", "north"]) $(`player-${s}`).querySelector(".turn").textContent = "";
  const rating = msg.player_rating === null ? "" : `Your puzzle rating: ${Math.round(msg.player_rating)}`
    + `${msg.rated ? "" : " (unchanged: only a first answer is rated)"}. `;
  $("ratings").textContent = `${rating}This puzzle: ${Math.round(msg.puzzle_rating)}.`;
  const rows = msg.moves.map((m) => {
    const tr = el("tr", m.action === msg.answer ? "answer" : "");
    if (m.action === played.action) tr.classList.add("played");
    const [next] = st.position.apply(m.action);
    const name = `${houseText(Number(m.action))}${m.action === msg.answer ? " (the answer)" : ""}`
      + `${m.action === played.action ? " (yours)" : ""}`;
    tr.append(el("th", "", name), el("td", "", signed(m.value)), el("td", "", String(m.loss)),
      el("td", "", lineText(next, m.line)));
    tr.firstChild.scope = "row";
    return tr;
  });
  $("values").querySelector("tbody").replaceChildren(...rows);
  $("values-section").hidden = false;
}

function refused(msg) {
  st.asked = false;
  if (msg.request === "puzzle_answer") {
    st.pending = null;
    st.answered = false;
    if (st.board && st.position) {
      st.board.show(st.position, null);
      st.board.setPlayable(new Set(st.position.legalBins()));
    }
  }
  $("error").textContent = msg.code === "unknown_puzzle" ? msg.message : `${msg.code}: ${msg.message}`;
  if (msg.request === "puzzle" && !st.shown) say($("prompt"), "No puzzle to show.");
}

$("next").addEventListener("click", () => {
  st.shown = null;
  st.wanted = null;
  ask();
});
$("variant").addEventListener("change", () => {
  $("error").textContent = "";
});
document.addEventListener("keydown", (e) => {
  if (!st.shown || st.answered || e.altKey || e.ctrlKey || e.metaKey || e.target.tagName === "INPUT") return;
  const house = houseOfKey(e.key);
  if (house === null || house > st.v.houses) return;
  const bin = st.position.toMove === SOUTH ? house : house + st.v.houses + 1;
  if (st.position.legalBins().includes(bin)) choose(bin);
});

net.start();
