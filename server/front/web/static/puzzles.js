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

/** A move as the player at the board says it: "house K" of the side to move, or "the swap". */
function moveText(action) {
  if (action === "swap") return "the swap";
  const bin = Number(action);
  const h = st.v.houses;
  return `house ${bin <= h ? bin : bin - h - 1}`;
}

/** Whether the position offers North the pie rule's swap. */
function swapOffered(position) {
  return position.pieOpen && position.toMove === NORTH && !position.transferPending && !position.end;
}

/** The final margin of whoever chose `move` (after a swap the chooser holds South's side). */
function mine(move) {
  return move.action === "swap" || st.shown.side === "south" ? move.value : -move.value;
}

function signed(value) {
  return value > 0 ? `+${value}` : String(value);
}

function boardShown(on) {
  for (const id of ["player-north", "board", "player-south"]) $(id).hidden = !on;
}

function shown(msg) {
  boardShown(true);
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
  $("swap").hidden = !swapOffered(st.position);
  $("swap").disabled = false;
  for (const s of ["south", "north"]) {
    const row = $(`player-${s}`);
    const toMove = (s === "south" ? SOUTH : NORTH) === side;
    row.classList.toggle("to-move", toMove);
    row.querySelector(".name").textContent = toMove ? "you" : "";
    row.querySelector(".turn").textContent = toMove ? "to move" : "";
  }
  $("title").textContent = `Puzzle ${msg.id}`;
  $("meta").textContent = `${msg.variant} · rated ${Math.round(msg.rating)} · played ${msg.plays} time${msg.plays === 1 ? "" : "s"}`;
  say($("prompt"), swapOffered(st.position)
    ? "North to move, the pie rule offered: swap sides or sow? Find the one choice that keeps the value."
    : `${sideName(side)} to move: find the one move that keeps the value (click a house or press its key).`);
  $("verdict").textContent = "";
  $("verdict").className = "puzzle-verdict";
  $("refutation").textContent = "";
  $("ratings").textContent = msg.player_rating === null ? "" : `Your puzzle rating: ${Math.round(msg.player_rating)}.`;
  $("values-section").hidden = true;
  $("themes").textContent = msg.themes.length ? `Themes: ${msg.themes.join(", ").replaceAll("_", " ")}.` : "";
  $("permalink").href = `/puzzle/${msg.id}`;
  history.replaceState(null, "", `/puzzle/${msg.id}`);
}

/** Answer with a house (its bin) or "swap". */
function choose(bin) {
  if (!st.shown || st.answered) return;
  st.answered = true;
  st.board.setPlayable(new Set());
  $("swap").disabled = true;
  const action = String(bin);
  const [after, event] = st.position.apply(action);
  st.board.show(after, action === "swap" ? null : event);
  say($("prompt"), `You chose ${moveText(action)}; checking…`);
  st.pending = { type: "puzzle_answer", puzzle_id: st.shown.id, action };
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
  const pie = msg.moves.some((m) => m.action === "swap");
  const answerMove = msg.moves.find((m) => m.action === msg.answer);
  if (msg.correct) {
    verdict.textContent = `Right: ${moveText(played.action)} keeps the value, `
      + `${pie ? `${signed(mine(played))} for you` : `${signed(msg.value)} for South`}.`;
    verdict.className = "puzzle-verdict right";
    $("refutation").textContent = `Then: ${lineText(after, played.line)}.`;
  } else {
    const instead = pie ? `you end ${signed(mine(played))} instead of ${signed(mine(answerMove))}`
      : `${signed(played.value)} for South instead of ${signed(msg.value)}`;
    verdict.textContent = `Wrong: ${moveText(played.action)} loses ${played.loss} seed${played.loss === 1 ? "" : "s"} `
      + `(${instead}). The answer was ${moveText(msg.answer)}.`;
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
    const name = `${moveText(m.action)}${m.action === msg.answer ? " (the answer)" : ""}`
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
      $("swap").disabled = false;
    }
  }
  if (msg.request === "puzzle" && !st.shown && msg.code === "unknown_puzzle") {
    boardShown(false);  // no empty board: the server's line says why there is none and what makes some
    $("error").textContent = "";
    say($("prompt"), `No puzzle to show: ${msg.message}.`);
    return;
  }
  $("error").textContent = msg.code === "unknown_puzzle" ? msg.message : `${msg.code}: ${msg.message}`;
  if (msg.request === "puzzle" && !st.shown) say($("prompt"), "No puzzle to show.");
}

$("swap").addEventListener("click", () => choose("swap"));
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
