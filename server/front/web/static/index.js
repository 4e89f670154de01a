// /: start a game (a hosted bot at once, an open match to share, or a seek), the open and live matches (join or
// watch), the recent finished games, and this browser's identity (a name chosen once, the key carried elsewhere).
// The lists are kept up to date by asking again every few seconds (public reads, charged by rows per address:
// the page asks for few rows, and not while it is hidden).

import { Link, nameProblem, tokenProblem } from "./net.js";
import { cell, copyField, el, link, nameWithRating, outcomeText, ratingsOf, showIdentity, showLinkState } from "./ui.js";

const EVERY_MS = { list: 2000, games: 6000, standings: 30000 };
const RECENT = 20;
const $ = (id) => document.getElementById(id);
const st = { ratings: new Map(), matches: [], seeks: [], games: [], due: { list: 0, games: 0, standings: 0 },
  backoff: 1, seeking: null };

const net = new Link({
  onReady() {
    st.due = { list: 0, games: 0, standings: 0 };
    drawIdentity();
    if (st.seeking) net.send({ type: "seek", variant: st.seeking });
    poll();
  },
  onIdentityError(msg) {
    $("identity-error").textContent = msg.code === "name_taken" ? `${msg.message}.`
      : msg.code === "bad_token" ? "This key is unknown to this server: you play as before." : msg.message;
  },
  onMessage(msg) {
    if (msg.type === "snapshot") {  // a game started: a bot game, an open match, a join, a seek paired
      location.assign(`/play/${encodeURIComponent(msg.match_id)}`);
    } else if (msg.type === "seeking") {
      $("seeking").hidden = false;
      $("seeking-text").textContent = `Seeking an opponent for ${msg.variant}: keep this page open… Others see your seek in their lobby, here and in the terminal.`;
    } else if (msg.type === "error" && (["create", "seek", "join"].includes(msg.request)
        || /^(create|seek|join)\./.test(msg.message))) {
      // a refused field names the request in `request` and its message (`create.variant: …`), said in words here
      $("play-error").textContent = msg.message.replace(/^(create|seek|join)\.variant: (Value error, )?/, "the game's settings: ");
      st.seeking = null;
      $("seeking").hidden = true;
    } else if (msg.type === "matches") {
      const gone = st.matches.some((m) => m.status === "live" && !msg.matches.some((n) => n.match_id === m.match_id));
      st.matches = msg.matches;
      st.seeks = msg.seeks || [];
      if (gone) st.due.games = st.due.standings = 0;  // a match ended: its game and ratings are new
      drawLive();
      drawSeeks();
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
    const mine = net.guest && (m.south === net.guest.name || m.north === net.guest.name);
    const game = `${m.south || "(open seat)"} v ${m.north || "(open seat)"}`;
    let action;
    if (m.status === "live") {
      action = link(`/${mine ? "play" : "watch"}/${encodeURIComponent(m.match_id)}`, mine ? "play" : "watch");
      action.setAttribute("aria-label", `${mine ? "play" : "watch"} ${game}`);  // each link says which game it opens
    } else if (mine) {
      action = link(`/play/${encodeURIComponent(m.match_id)}`, "yours: share it");
      action.setAttribute("aria-label", `yours: share it (${game})`);
    } else {
      action = el("button", "action", "join");
      action.type = "button";
      action.setAttribute("aria-label", `join ${m.south || m.north}'s match as ${m.south ? "North" : "South"}`);
      action.addEventListener("click", () => {
        $("play-error").textContent = "";
        net.sendOrSay({ type: "join", match_id: m.match_id }, $("play-error"), OFFLINE);
      });
    }
    tr.append(cell("Players", players(m.south, m.north)), cell("Variant", m.variant), cell("Ply", m.ply),
      cell("Watching", m.spectators), cell("", action));
    return tr;
  }));
  $("live-empty").hidden = st.matches.length > 0;
}

/** Who seeks an opponent in which variant; "play" seeks the same variant, which pairs the two at once. */
function drawSeeks() {
  const body = $("seeks").querySelector("tbody");
  body.replaceChildren(...st.seeks.map((s) => {
    const tr = el("tr");
    const mine = net.guest && s.name === net.guest.name;
    let action = el("span", "meta", "yours");
    if (!mine) {
      action = el("button", "action", "play");
      action.type = "button";
      action.setAttribute("aria-label", `play ${s.name} (${s.variant})`);
      action.addEventListener("click", () => seek(s.variant));
    }
    tr.append(cell("Player", nameWithRating(s.name, st.ratings)), cell("Variant", s.variant), cell("", action));
    return tr;
  }));
  $("seeks-empty").hidden = st.seeks.length > 0;
}

/** Seek an opponent in `variant` (kept across a reconnection: a seek lasts as long as its connection). */
function seek(variant) {
  $("play-error").textContent = "";
  if (net.sendOrSay({ type: "seek", variant }, $("play-error"), OFFLINE)) st.seeking = variant;
}

/** A finished game's replay link, named for the game ("replay ann v bob"): a screen reader tells the links apart. */
function replayLink(g) {
  const a = link(`/game/${encodeURIComponent(g.match_id)}`, "replay");
  a.setAttribute("aria-label", `replay ${g.south} v ${g.north}`);
  return a;
}

function drawRecent() {
  const body = $("recent").querySelector("tbody");
  body.replaceChildren(...st.games.map((g) => {
    const tr = el("tr");
    tr.dataset.match = g.match_id;
    const result = g.reason ? outcomeText(g.winner, g.result, g.reason) : g.status;
    tr.append(cell("Players", players(g.south, g.north)), cell("Variant", g.variant), cell("Ply", g.record.length),
      cell("Result", result), cell("", replayLink(g)));
    return tr;
  }));
  $("recent-empty").hidden = st.games.length > 0;
}

// --- a new game --------------------------------------------------------------------------------------------------

/** The variant text the form describes, e.g. `kalah(6,4,capture=empty,pie=on,clock=300+5)`. */
function variantText() {
  const parts = [$("houses").value || "6", $("seeds").value || "4"];
  if ($("capture").value !== "standard") parts.push(`capture=${$("capture").value}`);
  if ($("pie").checked) parts.push("pie=on");
  if ($("transfer").checked) parts.push("transfer=on");
  const clock = $("clock").value.trim();
  if (clock) parts.push(`clock=${clock}`);
  return `kalah(${parts.join(",")})`;
}

function formProblem() {
  for (const [id, lo, hi] of [["houses", 1, 12], ["seeds", 1, 200]]) {
    const n = Number($(id).value);
    if (!Number.isInteger(n) || n < lo || n > hi) return `${id}: a whole number from ${lo} to ${hi}`;
  }
  return clockProblem($("clock").value.trim());
}

const SECONDS = "(\\d{1,6}(?:\\.\\d{1,3})?)";
const TIME = new RegExp(`^(?:${SECONDS}(?:\\+${SECONDS})?|${SECONDS}/move)$`);

/** Why the server would refuse this time control (its limits: a base up to 3 h, an increment up to 180 s, a limit
 * per move up to an hour, and some time to play), or null; empty is untimed. */
function clockProblem(clock) {
  const m = TIME.exec(clock);
  if (clock && !m) return "time: base+increment in seconds (300+5), a base alone (600), or a limit per move (10/move)";
  if (!clock) return null;
  if (m[3] !== undefined) {
    const limit = Number(m[3]);
    return limit > 0 && limit <= 3600 ? null : "time: a limit per move of more than 0 and at most 3600 seconds (10/move)";
  }
  const [base, increment] = [Number(m[1]), Number(m[2] || 0)];
  if (!(base > 0 && base <= 10800)) return "time: a base of more than 0 and at most 10800 seconds (300+5), or empty for no clock";
  if (increment > 180) return "time: an increment of at most 180 seconds (300+5)";
  return null;
}

function drawVariant() {
  $("variant-text").textContent = formProblem() || variantText();
  $("play").textContent = $("opponent").value ? "Play the bot" : "Open a match";
  $("seek").hidden = Boolean($("opponent").value);
}

$("new-game").addEventListener("input", () => {
  drawVariant();
  // a refusal of the settings said under the form is stale once they change: say what is wrong now, if anything
  if ($("play-error").textContent) $("play-error").textContent = formProblem() || "";
});
const OFFLINE = "No connection to the server: reconnecting… press it again once the top right says connected.";

$("new-game").addEventListener("submit", (e) => {
  e.preventDefault();
  $("play-error").textContent = formProblem() || "";
  if (formProblem()) return;
  const msg = { type: "create", variant: variantText(), seat: $("seat").value, rated: $("rated").checked };
  if ($("opponent").value) msg.opponent = $("opponent").value;
  net.sendOrSay(msg, $("play-error"), OFFLINE);
});
$("seek").addEventListener("click", () => {
  $("play-error").textContent = formProblem() || "";
  if (!formProblem()) seek(variantText());
});
$("stop-seek").addEventListener("click", () => {
  st.seeking = null;
  $("seeking").hidden = true;
  net.reconnect();  // a seek lasts as long as its connection
});

// --- identity -----------------------------------------------------------------------------------------------------

function drawIdentity() {
  showIdentity(net.guest);
  $("my-name").textContent = net.guest.name;
  $("name-form").hidden = !net.guest.name.startsWith("guest-");
  const seats = net.seats || [];
  $("my-games").hidden = seats.length === 0;
  $("my-games-links").replaceChildren(...seats.flatMap((id, i) => [
    ...(i ? [", "] : []), link(`/play/${encodeURIComponent(id)}`, `back to game ${id}`)]));
  $("key").value = net.guest.token;
  $("ws-url").textContent = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}`;
}

$("name-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = $("name-input").value.trim();
  const problem = nameProblem(name);
  $("identity-error").textContent = problem ? `That name cannot be used: ${problem}.` : "";
  if (!problem) net.switchTo({ name });
});
$("import-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const token = $("import-key").value.trim();
  const problem = tokenProblem(token);
  $("identity-error").textContent = problem ? `That key cannot be used: ${problem}.` : "";
  $("import-key").value = "";
  if (!problem) net.switchTo({ token });
});
$("show-key").addEventListener("click", () => {
  $("key-box").hidden = false;
  $("show-key").hidden = true;
});
$("copy-key").addEventListener("click", () => copyField($("key"), $("key-copied")));

drawVariant();
setInterval(poll, 500);
document.addEventListener("visibilitychange", poll);
net.start();
