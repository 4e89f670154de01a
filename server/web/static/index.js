// /: the live matches and the recent finished games, kept up to date by asking again every few seconds
// (public reads, charged by rows per address: the page asks for few rows, and not while it is hidden).

import { Link } from "./net.js";
import { el, link, nameWithRating, outcomeText, ratingsOf, showLinkState } from "./ui.js";

const EVERY_MS = { list: 2000, games: 6000, standings: 30000 };
const RECENT = 20;
const $ = (id) => document.getElementById(id);
const st = { ratings: new Map(), matches: [], games: [], due: { list: 0, games: 0, standings: 0 }, backoff: 1 };

const net = new Link({
  onReady() {
    st.due = { list: 0, games: 0, standings: 0 };
    poll();
  },
  onMessage(msg) {
    if (msg.type === "matches") {
      const gone = st.matches.some((m) => m.status === "live" && !msg.matches.some((n) => n.match_id === m.match_id));
      st.matches = msg.matches;
      if (gone) st.due.games = st.due.standings = 0;  // a match ended: its game and ratings are new
      drawLive();
    } else if (msg.type === "game_list") {
      st.games = msg.games;
      drawRecent();
    } else if (msg.type === "standings_table") {
      st.ratings = ratingsOf(msg);
      drawLive();
      drawRecent();
    } else if (msg.type === "error" && msg.code === "rate_limited") {
      st.backoff = Math.min(8, st.backoff * 2);
    }
  },
  onState: showLinkState,
});

function poll() {
  if (!net.ready || document.hidden) return;
  const now = performance.now();
  const ask = { list: { type: "list" }, games: { type: "games", limit: RECENT }, standings: { type: "standings", limit: 200 } };
  for (const [what, msg] of Object.entries(ask)) {
    if (now >= st.due[what]) {
      net.send(msg);
      st.due[what] = now + EVERY_MS[what] * st.backoff;
    }
  }
}

function cell(label, content) {
  const td = el("td");
  td.dataset.label = label;
  if (content instanceof Node) td.append(content);
  else td.textContent = content;
  return td;
}

function players(south, north) {
  const span = el("span", "players");
  span.append(el("span", "south", nameWithRating(south, st.ratings)), el("span", "vs", " v "),
    el("span", "north", nameWithRating(north, st.ratings)));
  return span;
}

function drawLive() {
  const body = $("live").querySelector("tbody");
  body.replaceChildren(...st.matches.map((m) => {
    const tr = el("tr");
    tr.dataset.match = m.match_id;
    const action = m.status === "live" ? link(`/watch/${encodeURIComponent(m.match_id)}`, "watch")
      : el("span", null, "waiting for a player");
    tr.append(cell("Players", players(m.south, m.north)), cell("Variant", m.variant), cell("Ply", m.ply),
      cell("Watching", m.spectators), cell("", action));
    return tr;
  }));
  $("live-empty").hidden = st.matches.length > 0;
}

function drawRecent() {
  const body = $("recent").querySelector("tbody");
  body.replaceChildren(...st.games.map((g) => {
    const tr = el("tr");
    tr.dataset.match = g.match_id;
    const result = g.reason ? outcomeText(g.winner, g.result, g.reason) : g.status;
    tr.append(cell("Players", players(g.south, g.north)), cell("Variant", g.variant), cell("Ply", g.record.length),
      cell("Result", result), cell("", link(`/game/${encodeURIComponent(g.match_id)}`, "replay")));
    return tr;
  }));
  $("recent-empty").hidden = st.games.length > 0;
}

setInterval(poll, 500);
document.addEventListener("visibilitychange", poll);
net.start();
