// /watch/MATCH and /play/MATCH: follow a match, and play it when this browser's identity holds a seat.
// `watch` answers with a snapshot (with `you`, the side of a seated player); numbered events follow, each shown
// once, in order. An event past a gap (or before the first snapshot, whichever order the server sends a joiner's
// `joined` event and snapshot in) asks for what is missing with `sync`. After a dropped connection the page says
// hello again and sends `sync` with the last number it holds. A seated player's move is drawn at once (the rules'
// twin in kalah.js decides which houses react), confirmed by the server's ack and event, and undone with a line
// saying why when the server refuses it. A game of an event (`EVENT-rROUND-tTABLE`) links to the event; when the
// server pairs the player again (the next game's snapshot arrives), the page goes there once this game is over.

import { BoardView, houseOfKey, keysText } from "./board.js";
import { EndPanel } from "./end.js";
import { NORTH, Position, SIDE_NAMES, SOUTH, parseVariant, replay } from "./kalah.js";
import { Link } from "./net.js";
import {
  clockText, copyField, link, matchIdFromPath, moveItem, moveWords, nameWithRating, ratingsOf, resultText, say,
  showIdentity, showLinkState,
} from "./ui.js";

const matchId = matchIdFromPath();
const $ = (id) => document.getElementById(id);
const MAX_SOWING_MS = 600;
const LOW_MS = 10000;
// When the server accepts a claim (`kalah serve --grace` and `--idle-limit`, written into the page by the server)
const body = document.body.dataset;
const GRACE_MS = Number(body.graceMs) >= 0 ? Number(body.graceMs) : 60000;
const IDLE_MS = body.idleMs === "" ? null : Number(body.idleMs) >= 0 ? Number(body.idleMs) : 900000;
const ACTIONS = new Set(["move", "swap", "transfer"]);
const NEXT_GAME_MS = 1500;
const EVENT_GAME = /^([A-Za-z0-9_]{1,24})-r(\d+)-t(\d+)$/;
/** The event a match id belongs to and its game number ("2.1"), or nulls for a match outside events. */
function eventGame(id) {
  const m = EVENT_GAME.exec(id);
  return m ? { event: m[1], game: `${m[2]}.${m[3]}` } : { event: null, game: null };
}
const EVENT = eventGame(matchId);

const st = {
  received: null,  // the number of the last event taken into the queue (null: no snapshot yet)
  shown: null,     // the number of the last event drawn
  syncing: false,  // a sync was sent for a gap: its answer is awaited
  generation: 0,   // bumped by each snapshot: an animation of an older generation stops drawing
  v: null, board: null, position: null, record: [], lastMarks: null,
  names: { south: null, north: null }, ratings: new Map(), ratingRows: new Map(),
  status: null, end: null, clocks: null, clocksAt: 0, spectators: 0,
  connected: { south: true, north: true }, awaySince: { south: null, north: null }, claimAfter: 0,
  liveSince: 0, lastActionAt: 0,  // when this page saw the match live and its last action (for claims)
  you: null,       // "south" or "north" when this identity holds a seat in the match
  pending: null,   // this page's action sent and not yet seen as an event: {ply, token, msg, drawn, acked}
  resumed: false,  // a sync after a reconnection was sent: its answer is awaited
  transferFrom: null,
  queue: [], pumping: false,
  next: null,      // this player's next game of the same event, once the server has paired it
};

const net = new Link({
  onReady() {
    showIdentity(net.guest);
    st.syncing = false;
    st.resumed = st.received !== null;
    if (st.received === null) net.send({ type: "watch", match_id: matchId });
    else net.send({ type: "sync", match_id: matchId, since: st.received });
    if (st.pending) net.send(st.pending.msg);  // a move sent as the connection dropped: resent, never applied twice
    net.send({ type: "standings", limit: 200 });
  },
  onMessage: receive,
  onState(state) {
    showLinkState(state);
    if (st.board) drawAll(st.lastMarks);  // no connection: no house reacts, and the status line says why
  },
});

const end = new EndPanel({ net, matchId, $, state: st, go: (id) => location.assign(`/play/${encodeURIComponent(id)}`) });

function receive(msg) {
  if (msg.type === "snapshot" && msg.match_id !== matchId && msg.you && msg.status === "live" && EVENT.event
      && eventGame(msg.match_id).event === EVENT.event) return nextGame(msg.match_id);
  if (end.receive(msg)) return;
  if (msg.match_id !== undefined && msg.match_id !== null && msg.match_id !== matchId) return;
  switch (msg.type) {
    case "snapshot": return snapshot(msg);
    case "catch_up":
      if (st.received === null) return;
      st.syncing = false;
      for (const event of msg.events) take(event);
      if (st.resumed && !msg.events.length && st.clocks && st.status === "live") {
        // nothing happened meanwhile, but the clocks may have: a restarted server resumes them as stored at the
        // last action, so the running one is asked for again (a snapshot) instead of counted on from before
        net.send({ type: "sync", match_id: matchId, since: null });
      }
      st.resumed = false;
      return;
    case "event": return take(msg);
    case "ack":
      if (st.pending && st.pending.ply === msg.ply) st.pending.acked = true;
      return;
    case "presence": return presence(msg);
    case "standings_table":
      st.ratings = ratingsOf(msg);
      st.ratingRows = new Map((msg.rows || []).map((row) => [row.name, row]));
      end.ratingsChanged();
      return drawPlayers();
    case "error": return refused(msg);
    default:
      return undefined;
  }
}

/** A numbered event: the next one is queued, an old one skipped, one past a gap asks for what is missing. */
function take(event) {
  if (st.received === null) {
    // an event before the first snapshot (a joiner's `joined`): the snapshot is on its way, or asked for
    if (!st.syncing) net.send({ type: "sync", match_id: matchId, since: null });
    st.syncing = true;
    return;
  }
  if (event.seq <= st.received) return;
  if (event.seq > st.received + 1) {
    if (!st.syncing) net.send({ type: "sync", match_id: matchId, since: st.received });
    st.syncing = true;
    return;
  }
  st.received = event.seq;
  st.queue.push(event);
  pump();
}

function snapshot(snap) {
  st.generation += 1;
  st.queue = [];
  st.syncing = false;
  st.resumed = false;
  st.received = st.shown = snap.seq;
  if (!st.v || st.v.text !== snap.variant) {
    st.v = parseVariant(snap.variant);
    st.board = new BoardView($("board"), st.v, choose);
  }
  st.you = snap.you || null;
  setViewer();
  st.names = { south: snap.south, north: snap.north };
  if (snap.status === "live" && st.status !== "live") st.liveSince = performance.now();
  st.lastActionAt = performance.now();
  st.status = snap.status;
  st.end = snap.status === "finished" ? { result: snap.result, winner: snap.winner, reason: snap.reason } : null;
  st.spectators = snap.spectators;
  setClocks(snap.clocks);
  st.record = [...snap.record];
  if (st.pending && st.record.length > st.pending.ply) {
    if (st.record[st.pending.ply] !== st.pending.token) refusedLine("it was not played: the game had moved on");
    st.pending = null;
  }
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
  st.lastMarks = last;
  st.board.show(st.pending ? st.pending.after : st.position, st.pending ? null : last);
  if (st.you && location.pathname.startsWith("/watch/")) history.replaceState(null, "", `/play/${encodeURIComponent(matchId)}`);
  $("title").textContent = `${snap.south || "(open seat)"} v ${snap.north || "(open seat)"}`;
  if (st.status === "finished") end.finished(st.end, false);
  drawAll(last);
  scrollMoves();
}

/** The server paired this player in the event's next game: go there once this game is over (at once if it is). */
function nextGame(id) {
  st.next = id;
  const line = $("next-game");
  line.hidden = false;
  line.replaceChildren(`Your next game of the event (${eventGame(id).game}) has started: `,
    link(`/play/${encodeURIComponent(id)}`, "play it"));
  if (st.status === "finished") goNext();
}

/** Open the next game after a moment (the result of this one stays in view for it). */
function goNext() {
  setTimeout(() => location.assign(`/play/${encodeURIComponent(st.next)}`), NEXT_GAME_MS);
}

/** A game of an event: a link to the event's page above, and at the end instead of the rematch. */
function drawEventLinks() {
  if (!EVENT.event) return;
  const href = `/event/${encodeURIComponent(EVENT.event)}`;
  $("event-line").hidden = false;
  $("event-line").replaceChildren(`Game ${EVENT.game} of an event: `, link(href, "the event's standings and games"));
  $("rematch-line").hidden = true;
  $("event-back").hidden = false;
  $("event-back").replaceChildren(link(href, "Back to the event"));
}

/** The board as the seated player sees it (North's player: turned half a turn), or as a spectator does. */
function setViewer() {
  st.board.setViewer(st.you === "south" ? SOUTH : st.you === "north" ? NORTH : null);
  $("game").classList.toggle("flipped", st.you === "north");
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
    refreshControls();
  }
}

async function show(event, generation) {
  if (event.kind === "joined") {
    st.names[event.side] = event.player;
    if (event.clocks) setClocks(event.clocks);
    st.status = st.names.south && st.names.north ? "live" : "open";
    st.liveSince = st.lastActionAt = performance.now();
    $("title").textContent = `${st.names.south || "(open seat)"} v ${st.names.north || "(open seat)"}`;
    drawAll(st.lastMarks);
  } else if (event.kind === "action") {
    const before = st.position;
    const after = Position.fromFen(st.v, event.position);
    const marks = { ...event, extraTurn: event.extra_turn };
    st.position = after;
    st.lastActionAt = performance.now();
    if (event.clocks) setClocks(event.clocks);
    const mine = st.pending && st.pending.ply === event.ply ? st.pending : null;
    if (mine) {
      st.pending = null;
      if (mine.token === event.action) {
        await mine.drawn;  // drawn already, at once: the server's position replaces it without sowing again
        if (generation !== st.generation) return;
        st.board.show(after, marks);
      } else {
        refusedLine(`your move ${mine.token} was not played: ${event.action} was played at that ply`);
        st.board.show(before, st.lastMarks);
        await st.board.animate(before, marks, after, perSeed(event));
      }
    } else {
      // a backlog (after a reconnection, or moves faster than the sowing) is drawn at once, each position still once
      await st.board.animate(before, marks, after, st.queue.length ? 0 : perSeed(event));
    }
    if (generation !== st.generation) return;
    st.record.push(event.action);
    st.lastMarks = marks;
    if (event.action === "swap") {
      st.names = { south: st.names.north, north: st.names.south };
      if (st.you) {
        st.you = st.you === "south" ? "north" : "south";
        setViewer();
      }
    }
    $("moves").append(moveItem(marks, event.position));
    scrollMoves();
    drawAll(marks);
  } else if (event.kind === "game_over") {
    st.status = "finished";
    st.end = { result: event.result, winner: event.winner, reason: event.reason };
    st.position = Position.fromFen(st.v, event.position);
    if (st.pending) {
      refusedLine(`your move ${st.pending.token} was not played: the game is over`);
      st.pending = null;
    }
    if (event.clocks) setClocks(event.clocks);
    else if (st.clocks) st.clocks = { ...st.clocks, running: null };
    st.board.show(st.position, null);
    end.finished(st.end, true);
    drawAll(null);
    if (st.next) goNext();
  }
}

function perSeed(event) {
  return Math.min(70, MAX_SOWING_MS / Math.max(1, event.path.length));
}

// --- playing -------------------------------------------------------------------------------------------------

/** Whether this page may act now: seated, the game live, its side to move, nothing sent or being drawn. */
function myTurn() {
  return Boolean(st.you && st.status === "live" && st.position && !st.position.end && !st.pending
    && !st.pumping && !st.queue.length && SIDE_NAMES[st.position.toMove] === st.you && net.ready);
}

/** The houses that react now: the legal sowings by the rules' twin, or during the opening transfer any house. */
function playableBins() {
  if (!myTurn()) return new Set();
  const p = st.position;
  if (p.transferPending) {
    const out = new Set();
    const h = st.v.houses;
    for (let bin = 1; bin <= 2 * h + 1; bin++) {
      if (bin === h + 1) continue;
      if (st.transferFrom === null ? p.pits[bin - 1] > 0 : bin !== st.transferFrom) out.add(bin);
    }
    if (st.transferFrom !== null) out.add(st.transferFrom);  // a second click takes the choice back
    return out;
  }
  return new Set(p.legalBins());
}

function choose(bin) {
  if (!playableBins().has(bin)) return;
  const p = st.position;
  if (p.transferPending) {
    if (st.transferFrom === null) st.transferFrom = bin;
    else if (st.transferFrom === bin) st.transferFrom = null;
    else {
      const src = st.transferFrom;
      st.transferFrom = null;
      act({ type: "transfer", match_id: matchId, ply: p.ply, src, dst: bin }, `t${src}-${bin}`);
      return;
    }
    refreshControls();
    return;
  }
  act({ type: "move", match_id: matchId, ply: p.ply, bin }, String(bin));
}

/** Send an action and draw it at once; the server's event confirms it, a refusal undoes it. */
function act(msg, token) {
  if (!myTurn()) return;
  let after;
  let event;
  try {
    [after, event] = st.position.apply(token);
  } catch (err) {
    refusedLine(err.message);
    return;
  }
  $("refused").textContent = "";
  const marks = { ...event, extraTurn: event.extraTurn };
  const drawn = st.board.animate(st.position, marks, after, token.startsWith("t") || token === "swap" ? 0 : perSeed(event));
  st.pending = { ply: msg.ply, token, msg, after, drawn, acked: false };
  net.send(msg);
  refreshControls();
  $("status").textContent = `Your move ${token} is sent…`;
}

/** The server refused a request: an action of this page is undone, with the reason in one line. */
function refused(msg) {
  if (ACTIONS.has(msg.request)) {
    if (st.pending) {
      st.pending = null;
      st.board.show(st.position, st.lastMarks);
    }
    refusedLine(`your move was not played: ${msg.message}`);
    drawAll(st.lastMarks);
    return;
  }
  if (msg.request === "claim") {
    const wait = /claim in ([\d.]+) s/.exec(msg.message);
    st.claimAfter = performance.now() + (wait ? Number(wait[1]) * 1000 : GRACE_MS);
    refusedLine(`Not yet: ${msg.message}`);
    refreshControls();
    return;
  }
  if (msg.request === "join") {
    refusedLine(`you cannot take this seat: ${msg.message}`);
    return;
  }
  if (msg.request === "resign" || msg.request === "leave") {
    refusedLine(msg.message);
    return;
  }
  if (msg.request === "watch" || msg.request === "sync") {
    if (msg.code === "unknown_match" && st.received === null) return missing();
    refusedLine(msg.message);
  }
}

/** Send a request of the player's (resign, claim, join, leave); without a connection the refusal line says so
 * instead, and nothing is sent. */
function request(msg) {
  return net.sendOrSay(msg, $("refused"));
}

function refusedLine(text) {
  $("refused").textContent = text.charAt(0).toUpperCase() + text.slice(1);
}

/** An unknown match: only the message and a way back (no board, no moves). */
function missing() {
  $("game").hidden = true;
  $("moves-section").hidden = true;
  $("missing").hidden = false;
  $("title").textContent = "No such match";
  $("meta").textContent = "";
  $("missing-text").textContent = `No live match ${matchId}.`;
  $("missing-replay").replaceChildren(link(`/game/${encodeURIComponent(matchId)}`, "Replay it if it is stored"));
}

function presence(msg) {
  st.spectators = msg.spectators;
  const now = performance.now();
  for (const side of ["south", "north"]) {
    const on = msg[`${side}_connected`];
    if (!on && st.connected[side]) st.awaySince[side] = now;
    if (on) st.awaySince[side] = null;
    st.connected[side] = on;
  }
  drawAll(st.lastMarks);
}

function opponentSide() {
  return st.you === "south" ? "north" : "south";
}

/** Claim is offered once the server would accept it: the opponent has had no connection for the grace period
 * since the match went live, or (untimed) has been to move without moving for the no-move limit. Each time is
 * counted from when this page saw it, never earlier than the server counts it. */
function claimOffered() {
  if (!st.you || st.status !== "live" || !st.position) return "";
  const now = performance.now();
  if (now < st.claimAfter) return "";
  const them = opponentSide();
  const since = st.awaySince[them];
  if (since !== null && now - Math.max(since, st.liveSince) >= GRACE_MS) return "opponent away";
  const idle = IDLE_MS !== null && !st.clocks && SIDE_NAMES[st.position.toMove] === them
    && now - st.lastActionAt >= IDLE_MS;
  return idle ? "opponent not moving" : "";
}

// --- drawing -------------------------------------------------------------------------------------------------

function drawAll(event) {
  drawPlayers();
  drawStatus(event);
  refreshControls();
}

/** The controls of a seated player and of a visitor who could take the open seat. */
function refreshControls() {
  if (!st.board) return;
  const playing = Boolean(st.you) && st.status === "live";
  const turn = myTurn();
  st.board.setPlayable(playableBins(), st.transferFrom);
  $("controls").hidden = !playing;
  $("swap").hidden = !(turn && st.position.pieOpen && !st.position.transferPending && st.position.toMove === NORTH);
  $("no-transfer").hidden = !(turn && st.position.transferPending);
  const claim = claimOffered();
  $("claim").hidden = !claim;
  if (claim) $("claim").textContent = `Claim the win (${claim})`;
  if (!playing) $("confirm").hidden = true;
  const seat = $("seat");
  const open = st.status === "open";
  seat.hidden = !open;
  if (open) {
    const openSide = st.names.south ? "North" : "South";
    $("join").hidden = Boolean(st.you);
    $("join").textContent = `Take the open seat (${openSide})`;
    $("share").hidden = !st.you;
    $("share-link").value = `${location.origin}/play/${encodeURIComponent(matchId)}`;
    $("seat-text").textContent = st.you ? "Waiting for a second player." : `${st.names.south || st.names.north} waits for an opponent.`;
  }
  const keys = $("keys");
  keys.hidden = !playing;
  if (playing) {
    const h = st.v.houses;
    const first = st.you === "south" ? 1 : h + 2;
    keys.textContent = `Keys: ${keysText(h)} sow your houses in the order the seeds go (1 is bin ${first}); `
      + "Tab and Enter work too.";
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
    const running = st.clocks.running === side && st.status === "live";
    let ms = st.clocks[`${side}_ms`];
    if (running) ms -= performance.now() - st.clocksAt;
    const flag = ms <= 0 && (running || (st.end && st.end.reason === "time"));
    node.textContent = flag ? "0.0 flag" : `${clockText(ms)}${ms < LOW_MS && running ? " low" : ""}`;
    node.classList.toggle("running", running);
    node.classList.toggle("low", ms < LOW_MS);
    node.classList.toggle("flag", Boolean(flag));
  }
}

function who(side) {
  const name = st.names[side];
  if (st.you === side) return "You";
  return `${side === "south" ? "South" : "North"}${name ? ` (${name})` : ""}`;
}

function drawPlayers() {
  for (const side of ["south", "north"]) {
    const row = $(`player-${side}`);
    const you = st.you === side ? " (you)" : "";
    row.querySelector(".name").textContent = nameWithRating(st.names[side], st.ratings) + you;
    const toMove = st.status === "live" && st.position && !st.position.end
      && st.position.toMove === (side === "south" ? 0 : 1);
    row.classList.toggle("to-move", Boolean(toMove));
    row.querySelector(".turn").textContent = toMove ? "to move" : "";
    row.querySelector(".away").textContent = st.status === "live" && !st.connected[side] ? "away" : "";
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
  let text = $("status").textContent;
  say($("note"), event ? moveWords(event) : "");
  if (st.status === "finished" && st.end) {
    text = `Game over. ${resultText(st.end, st.names)}.`;
    $("replay").replaceChildren(link(`/game/${encodeURIComponent(matchId)}`, "Replay this game with the solver's values"));
  } else if (st.status === "open") {
    text = "Waiting for a second player.";
  } else if (st.you && !net.ready) {
    text = st.pending ? `Connection lost: your move ${st.pending.token} is sent again once it is back (reconnecting…).`
      : "Connection lost: reconnecting… You can move once it is back.";
  } else if (st.position && st.pending) {
    text = `Your move ${st.pending.token} is sent…`;
  } else if (st.position) {
    const side = SIDE_NAMES[st.position.toMove];
    const again = event && event.extraTurn && event.side === side;
    const flagged = st.clocks && st.clocks.running === side && st.clocks[`${side}_ms`] - (performance.now() - st.clocksAt) <= 0;
    if (flagged) text = `${who(side)}: the flag fell (time is up).`;
    else if (st.you === side) {
      if (st.position.transferPending) {
        text = st.transferFrom === null ? "Your turn: the opening transfer. Choose a house to take one seed from, or no transfer."
          : `Your turn: move one seed from bin ${st.transferFrom} to which house?`;
      } else if (st.position.pieOpen && side === "north") {
        text = "Your turn: choose a house, or swap sides (pie rule).";
      } else text = again ? "Your turn again (extra turn): choose a house." : "Your turn: choose a house.";
    } else {
      text = `${who(side)} ${st.you ? "is" : ""}${st.you ? " to move: wait for the move." : "to move."}`
        + (again ? " (extra turn)" : "");
    }
  }
  say($("status"), text);
}

function scrollMoves() {
  const list = $("moves");
  list.scrollTop = list.scrollHeight;
}

// --- controls ------------------------------------------------------------------------------------------------

document.addEventListener("keydown", (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey || e.target instanceof HTMLInputElement) return;
  const house = houseOfKey(e.key);
  if (house === null || !st.you || !st.v || house > st.v.houses) return;
  const bin = st.you === "south" ? house : st.v.houses + 1 + house;
  if (playableBins().has(bin)) {
    e.preventDefault();
    choose(bin);
  }
});
$("swap").addEventListener("click", () => {
  if (myTurn()) act({ type: "swap", match_id: matchId, ply: st.position.ply }, "swap");
});
$("no-transfer").addEventListener("click", () => {
  st.transferFrom = null;
  if (myTurn()) act({ type: "transfer", match_id: matchId, ply: st.position.ply, src: null, dst: null }, "t-");
});
$("resign").addEventListener("click", () => {
  $("confirm").hidden = false;
  $("resign").hidden = true;
  $("resign-no").focus();
});
$("resign-no").addEventListener("click", () => {
  $("confirm").hidden = true;
  $("resign").hidden = false;
  $("resign").focus();
});
$("resign-yes").addEventListener("click", () => {
  $("confirm").hidden = true;
  $("resign").hidden = false;
  request({ type: "resign", match_id: matchId });
});
$("claim").addEventListener("click", () => request({ type: "claim", match_id: matchId }));
$("join").addEventListener("click", () => request({ type: "join", match_id: matchId }));
$("cancel").addEventListener("click", () => {
  if (request({ type: "leave", match_id: matchId })) setTimeout(() => location.assign("/"), 300);
});
$("copy-link").addEventListener("click", () => copyField($("share-link"), $("link-copied")));

setInterval(() => {
  if (st.clocks && st.status === "live") {
    drawClocks();
    if (st.position && !st.pending) drawStatus(st.lastMarks);
  }
  if (st.you && st.status === "live" && $("claim").hidden === Boolean(claimOffered())) refreshControls();
}, 100);
drawEventLinks();
net.start();
