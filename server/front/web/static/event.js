// /event/ID: one event as it stands (standings, the games of the current round, the crosstable, links to watch
// the games under way and replay the finished ones), kept up to date by following it (`event {follow: true}`:
// the server pushes each new `event_state`, at most one a second). An unknown event shows only a message and a
// way back, as the match pages do. A visitor enters and leaves with `event_join` and `event_leave`, and is told
// what an open event waits for; when the server pairs them (it sends this page the new game's `snapshot`), the
// page goes to the game, and a game of theirs under way is linked as "play".

import { Link } from "./net.js";
import { cell, el, link, say, showIdentity, showLinkState } from "./ui.js";

const KINDS = { arena: "arena", swiss: "Swiss", round_robin: "round-robin" };
const RESULTS = { "1-0": "1-0", "0-1": "0-1", "1/2-1/2": "½-½", "*": "under way", bye: "bye" };
const $ = (id) => document.getElementById(id);
const eventId = decodeURIComponent(location.pathname.split("/")[2] || "");
const st = { seq: -1, state: null, playing: new Set() };

const net = new Link({
  onReady() {
    showIdentity(net.guest);
    st.seq = -1;  // a reconnection: the answer is the whole state again
    net.send({ type: "event", event_id: eventId, follow: true });
  },
  onMessage(msg) {
    if (msg.type === "event_state" && msg.event_id === eventId && msg.seq >= st.seq) {
      st.seq = msg.seq;
      draw(msg);
    } else if (msg.type === "snapshot" && msg.you && msg.status === "live" && ofThisEvent(msg.match_id)) {
      location.assign(`/play/${encodeURIComponent(msg.match_id)}`);  // paired: the clock runs, the game comes first
    } else if (msg.type === "error" && (msg.request === "event_join" || msg.request === "event_leave")) {
      $("entry-error").textContent = msg.message;
    } else if (msg.type === "error" && msg.request === "event") {
      if (msg.code === "unknown_event") missing();
      else say($("status"), msg.message);
    }
  },
  onState: showLinkState,
});

/** Whether a match is one of this event's games (ids `EVENT-rROUND-tTABLE`). */
function ofThisEvent(matchId) {
  return typeof matchId === "string" && matchId.startsWith(`${eventId}-r`);
}

function me() {
  return net.guest ? net.guest.name : null;
}

const plural = (n, one, many) => `${n === 1 ? "one" : n} ${n === 1 ? one : many}`;

/** What an event waits for or is doing, in words: "Starts when 2 have entered: 1 so far, one more entrant needed." */
function waitsText(s) {
  const count = s.standings.length;
  const { min_entrants: min, max_entrants: max, start_at: startAt } = s.settings;
  if (s.status === "open") {
    const full = count >= max ? ` It is full (${max}).` : "";
    if (startAt) {
      const at = new Date(startAt * 1000).toLocaleTimeString();
      const short = count < min ? ` ${plural(min - count, "more entrant", "more entrants")} needed, or it is cancelled.` : "";
      return `Starts at ${at} with at least ${min} entrants: ${count} so far.${short}${full}`;
    }
    return `Waits for ${plural(min - count, "more entrant", "more entrants")}: it starts when ${min} have entered `
      + `(${count} so far, at most ${max}).${full}`;
  }
  if (s.status === "running") {
    if (s.settings.kind === "arena") return "Under way: whoever finishes a game is paired again. You may join or come back until it ends.";
    return `Under way: round ${s.round}${s.rounds ? ` of ${s.rounds}` : ""}. It takes no new entrants.`;
  }
  return s.status === "cancelled" ? "Cancelled: too few entrants at its start time." : "Finished.";
}

/** The entry panel: what the event waits for, whether you are in it, Join or Leave, your game under way. */
function drawEntry(s) {
  const name = me();
  const row = name ? s.standings.find((r) => r.name === name) : null;
  const ended = s.status === "finished" || s.status === "cancelled";
  const arena = s.settings.kind === "arena";
  $("entry").hidden = false;
  say($("waits"), waitsText(s));
  let entered = "";
  if (row && row.active) entered = `You (${name}) are entered.`;
  else if (row) entered = `You (${name}) left: you are not paired again.`;
  else if (!ended) entered = `You (${name || "this browser"}) are not entered.`;
  say($("entered"), entered);
  const open = s.status === "open" || (arena && s.status === "running");
  const room = s.standings.length < s.settings.max_entrants || Boolean(row);
  $("join").hidden = !(open && room && !(row && row.active));
  $("join").textContent = row ? "Join this event again" : "Join this event";
  $("leave").hidden = !(row && row.active && !ended);
  $("leave").textContent = s.status === "running" ? "Leave this event (no more games)" : "Leave this event";
  const mine = name ? s.pairings.filter((p) => p.result === "*" && p.match_id && (p.south === name || p.north === name)) : [];
  const game = $("your-game");
  game.hidden = mine.length === 0;
  if (mine.length) {
    const p = mine[0];
    const a = link(`/play/${encodeURIComponent(p.match_id)}`, `Play your game ${p.round}.${p.table}`);
    game.replaceChildren("Your game is under way: ", a);
  }
}

function missing() {
  $("event").hidden = true;
  $("missing").hidden = false;
  $("title").textContent = "No such event";
  document.title = "Kalah Arena: no such event";
  $("missing-text").textContent = `No event ${eventId} on this server.`;
}

const num = (x) => String(Math.round(x * 100) / 100);  // 1, 0.5, 0.25 (Sonneborn-Berger quarters)

function drawStandings(s, arena) {
  $("standings").querySelector("tbody").replaceChildren(...s.standings.map((r) => {
    const tr = el("tr");
    tr.dataset.name = r.name;
    const name = `${r.name}${r.active ? "" : " (left)"}${r.on_fire ? " (on a streak)" : ""}`;
    const score = arena ? `${r.points ?? 0} points` : num(r.score);
    const ties = arena ? "" : `Buchholz ${num(r.buchholz)}, S-B ${num(r.sonneborn_berger)}`;
    tr.append(cell("#", r.rank), cell("Name", name), cell("Score", score), cell("Tiebreaks", ties),
      cell("W-D-L", `${r.wins}-${r.draws}-${r.losses}`));
    return tr;
  }));
  $("standings-empty").hidden = s.standings.length > 0;
}

/** A pairing's link: watch a game under way, replay a finished one (none for a bye). */
function gameLink(p) {
  if (!p.match_id || p.result === "bye") return "";
  const live = p.result === "*";
  const mine = live && me() !== null && (p.south === me() || p.north === me());
  const verb = mine ? "play" : live ? "watch" : "replay";
  const a = link(`/${mine ? "play" : live ? "watch" : "game"}/${encodeURIComponent(p.match_id)}`, verb);
  a.setAttribute("aria-label", `${verb} ${p.south} v ${p.north} (game ${p.round}.${p.table})`);
  return a;
}

function drawPairings(s, arena) {
  // the current round's games (an arena: the games under way), then the others, newest first
  const current = (p) => (arena ? p.result === "*" : p.round === s.round);
  const shown = [...s.pairings.filter(current).sort((a, b) => a.table - b.table),
    ...s.pairings.filter((p) => !current(p)).reverse()];
  $("pairings-title").textContent = arena ? "Games" : `Games (round ${s.round}${s.rounds ? ` of ${s.rounds}` : ""} first)`;
  $("pairings").querySelector("tbody").replaceChildren(...shown.map((p) => {
    const tr = el("tr", current(p) ? "current" : null);
    if (p.match_id) tr.dataset.match = p.match_id;
    tr.append(cell("Game", `${p.round}.${p.table}`), cell("South", p.south), cell("North", p.north || ""),
      cell("Result", RESULTS[p.result] || p.result), cell("", gameLink(p)));
    return tr;
  }));
  $("pairings-empty").hidden = shown.length > 0;
}

function drawCrosstable(s) {
  $("cross-section").hidden = s.crosstable.length === 0;
  if (!s.crosstable.length) return;
  const rounds = Math.max(...s.crosstable.map((r) => r.cells.length));
  const head = el("tr");
  head.append(el("th", null, "#"), el("th", null, "Name"), el("th", null, "Score"));
  for (let i = 1; i <= rounds; i += 1) head.append(el("th", null, `R${i}`));
  $("crosstable").querySelector("thead").replaceChildren(head);
  $("crosstable").querySelector("tbody").replaceChildren(...s.crosstable.map((r) => {
    const tr = el("tr");
    tr.dataset.name = r.name;
    tr.append(cell("#", r.rank), cell("Name", r.name), cell("Score", num(r.score)),
      ...r.cells.map((c, i) => cell(`R${i + 1}`, c)));
    return tr;
  }));
}

function draw(s) {
  const arena = s.settings.kind === "arena";
  const kind = KINDS[s.settings.kind] || s.settings.kind;
  $("title").textContent = s.settings.name;
  document.title = `Kalah Arena: ${s.settings.name}`;
  const round = s.rounds ? `, round ${s.round}/${s.rounds}` : "";
  const ends = arena && s.ends_at && s.status === "running" ? `, ends ${new Date(s.ends_at * 1000).toLocaleTimeString()}` : "";
  $("meta").textContent = `${kind}, ${s.settings.variant}${s.settings.rated ? ", rated" : ""}, by ${s.creator}`;
  say($("status"), `${s.status}${round}${ends}`);
  st.state = s;
  drawEntry(s);
  drawStandings(s, arena);
  drawPairings(s, arena);
  drawCrosstable(s);
}

$("join").addEventListener("click", () => {
  $("entry-error").textContent = "";
  net.sendOrSay({ type: "event_join", event_id: eventId }, $("entry-error"));
});
$("leave").addEventListener("click", () => {
  $("entry-error").textContent = "";
  net.sendOrSay({ type: "event_leave", event_id: eventId }, $("entry-error"));
});

net.start();  // an id no event has, whatever its shape, is the server's unknown_event
