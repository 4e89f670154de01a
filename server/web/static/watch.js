// /watch/MATCH: follow a live match. `watch` answers with a snapshot; numbered events follow, each shown once,
// in order. After a dropped connection the page says hello again and sends `sync` with the last number it holds:
// the catch-up brings exactly the missed events (a duplicate is skipped by its number, a gap asks again).

import { BoardView } from "./board.js";
import { Position, parseVariant, replay } from "./kalah.js";
import { Link } from "./net.js";
import {
  clockText, link, matchIdFromPath, moveItem, moveWords, nameWithRating, ratingsOf, resultText, showLinkState,
} from "./ui.js";

const matchId = matchIdFromPath();
const $ = (id) => document.getElementById(id);
const MAX_SOWING_MS = 600;

const st = {
  received: null,  // the number of the last event taken into the queue (null: no snapshot yet)
  shown: null,     // the number of the last event drawn
  generation: 0,   // bumped by each snapshot: an animation of an older generation stops drawing
  v: null, board: null, position: null, record: [],
  names: { south: null, north: null }, ratings: new Map(),
  status: null, end: null, clocks: null, clocksAt: 0, spectators: 0,
  queue: [], pumping: false,
};

const net = new Link({
  onReady() {
    if (st.received === null) net.send({ type: "watch", match_id: matchId });
    else net.send({ type: "sync", match_id: matchId, since: st.received });
    if (!st.ratings.size) net.send({ type: "standings", limit: 200 });
  },
  onMessage: receive,
  onState: showLinkState,
});

function receive(msg) {
  if (msg.match_id !== undefined && msg.match_id !== matchId && msg.type !== "error") return;
  switch (msg.type) {
    case "snapshot": return snapshot(msg);
    case "catch_up":
      if (st.received === null) return;
      for (const event of msg.events) take(event);
      return;
    case "event": return take(msg);
    case "presence":
      st.spectators = msg.spectators;
      return drawMeta();
    case "standings_table":
      st.ratings = ratingsOf(msg);
      return drawPlayers();
    case "error":
      if (msg.request === "watch" || msg.request === "sync") {
        $("status").textContent = msg.code === "unknown_match" ? `No live match ${matchId}.` : msg.message;
        $("replay").replaceChildren(link(`/game/${encodeURIComponent(matchId)}`, "Replay it if it is stored"));
      }
      return undefined;
    default:
      return undefined;
  }
}

/** A numbered event: the next one is queued, an old one skipped, one past a gap asks for what is missing. */
function take(event) {
  if (st.received === null || event.seq <= st.received) return;
  if (event.seq > st.received + 1) {
    net.send({ type: "sync", match_id: matchId, since: st.received });
    return;
  }
  st.received = event.seq;
  st.queue.push(event);
  pump();
}

function snapshot(snap) {
  st.generation += 1;
  st.queue = [];
  st.received = st.shown = snap.seq;
  if (!st.v || st.v.text !== snap.variant) {
    st.v = parseVariant(snap.variant);
    st.board = new BoardView($("board"), st.v);
  }
  st.names = { south: snap.south, north: snap.north };
  st.status = snap.status;
  st.end = snap.status === "finished" ? { result: snap.result, winner: snap.winner, reason: snap.reason } : null;
  st.spectators = snap.spectators;
  setClocks(snap.clocks);
  st.record = [...snap.record];
  st.position = Position.fromFen(st.v, snap.position);
  const list = $("moves");
  list.replaceChildren();
  let last = null;
  try {
    const steps = replay(st.v, st.record);
    if (steps[steps.length - 1].position.fen().split(" ")[0] !== snap.position.split(" ")[0]) {
      throw new Error("the record does not lead to the server's position");
    }
    for (const step of steps.slice(1)) list.append(moveItem(step.event, step.position.fen()));
    last = steps.length > 1 ? steps[steps.length - 1].event : null;
  } catch (err) {
    console.warn(`move marks unavailable: ${err.message}`);
    st.record.forEach((token, ply) => list.append(moveItem({ ply, side: "", action: token, path: [] }, "")));
  }
  st.board.show(st.position, last);
  $("title").textContent = `${snap.south || "?"} v ${snap.north || "?"}`;
  drawPlayers();
  drawMeta();
  drawStatus(last);
  scrollMoves();
}

async function pump() {
  if (st.pumping) return;
  st.pumping = true;
  try {
    while (st.queue.length) {
      const generation = st.generation;
      const event = st.queue.shift();
      await show(event, generation);
      if (generation === st.generation) st.shown = event.seq;
    }
  } finally {
    st.pumping = false;
  }
}

async function show(event, generation) {
  if (event.kind === "joined") {
    st.names[event.side] = event.player;
    if (event.clocks) setClocks(event.clocks);
    st.status = st.names.south && st.names.north ? "live" : "open";
    drawPlayers();
  } else if (event.kind === "action") {
    const before = st.position;
    const after = Position.fromFen(st.v, event.position);
    const marks = { ...event, extraTurn: event.extra_turn };
    st.position = after;
    if (event.clocks) setClocks(event.clocks);
    // a backlog (after a reconnection, or moves faster than the sowing) is drawn at once, each position still once
    const perSeed = st.queue.length ? 0 : Math.min(70, MAX_SOWING_MS / Math.max(1, event.path.length));
    await st.board.animate(before, marks, after, perSeed);
    if (generation !== st.generation) return;
    st.record.push(event.action);
    if (event.action === "swap") st.names = { south: st.names.north, north: st.names.south };
    $("moves").append(moveItem(marks, event.position));
    scrollMoves();
    drawPlayers();
    drawStatus(marks);
  } else if (event.kind === "game_over") {
    st.status = "finished";
    st.end = { result: event.result, winner: event.winner, reason: event.reason };
    st.position = Position.fromFen(st.v, event.position);
    if (event.clocks) setClocks(event.clocks);
    else if (st.clocks) st.clocks = { ...st.clocks, running: null };
    st.board.show(st.position, null);
    drawPlayers();
    drawStatus(null);
  }
}

function setClocks(clocks) {
  st.clocks = clocks && (clocks.south_ms !== null || clocks.north_ms !== null) ? clocks : null;
  st.clocksAt = performance.now();
  drawClocks();
}

function drawClocks() {
  for (const side of ["south", "north"]) {
    const node = document.querySelector(`#player-${side} .clock`);
    if (!st.clocks) {
      node.textContent = "";
      continue;
    }
    let ms = st.clocks[`${side}_ms`];
    if (st.clocks.running === side && st.status === "live") ms -= performance.now() - st.clocksAt;
    node.textContent = clockText(ms);
    node.classList.toggle("running", st.clocks.running === side && st.status === "live");
    node.classList.toggle("low", ms < 10000);
  }
}

function drawPlayers() {
  for (const side of ["south", "north"]) {
    const row = $(`player-${side}`);
    row.querySelector(".name").textContent = nameWithRating(st.names[side], st.ratings);
    const toMove = st.status === "live" && st.position && !st.position.end
      && st.position.toMove === (side === "south" ? 0 : 1);
    row.classList.toggle("to-move", Boolean(toMove));
    row.querySelector(".turn").textContent = toMove ? "to move" : "";
  }
  drawClocks();
}

function drawMeta() {
  if (!st.v) return;
  const watching = `${st.spectators} watching`;
  $("meta").textContent = `${st.v.text} · ply ${st.record.length} · ${watching} · match ${matchId}`;
}

function drawStatus(event) {
  drawMeta();
  const status = $("status");
  const note = $("note");
  note.textContent = event ? moveWords(event) : "";
  if (st.status === "finished" && st.end) {
    status.textContent = `Game over. ${resultText(st.end, st.names)}.`;
    $("replay").replaceChildren(link(`/game/${encodeURIComponent(matchId)}`, "Replay this game"));
  } else if (st.status === "open") {
    status.textContent = "Waiting for a second player.";
  } else if (st.position) {
    const side = st.position.toMove === 0 ? "South" : "North";
    status.textContent = event && event.extraTurn ? `${side} moves again.` : `${side} to move.`;
  }
}

function scrollMoves() {
  const list = $("moves");
  list.scrollTop = list.scrollHeight;
}

setInterval(() => {
  if (st.clocks && st.status === "live") drawClocks();
}, 100);
net.start();
