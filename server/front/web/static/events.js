// /events: the server's events (arenas, Swiss tournaments, round-robins), newest first, each linked to its page
// /event/ID. The list is a public read, asked for again every few seconds while the page is visible. The form
// below opens an event (`event_create`, the settings of `kalah event create`) and goes to its page.

import { parseVariant } from "./kalah.js";
import { Link } from "./net.js";
import { cell, el, link, showIdentity, showLinkState } from "./ui.js";

const EVERY_MS = 5000;
const LIMIT = 50;
const KINDS = { arena: "arena", swiss: "Swiss", round_robin: "round-robin" };
const $ = (id) => document.getElementById(id);
const st = { due: 0, backoff: 1, creating: false };

const net = new Link({
  onReady() {
    showIdentity(net.guest);
    st.due = 0;
    poll();
  },
  onMessage(msg) {
    if (msg.type === "event_list") draw(msg.events || []);
    else if (msg.type === "error" && msg.code === "rate_limited") st.backoff = Math.min(8, st.backoff * 2);
    else if (msg.type === "error" && msg.request === "events") $("events-error").textContent = msg.message;
    else if (msg.type === "error" && msg.request === "event_create") $("create-error").textContent = msg.message;
    else if (msg.type === "event_state" && st.creating) location.assign(`/event/${encodeURIComponent(msg.event_id)}`);
  },
  onState: showLinkState,
});

function poll() {
  if (!net.ready || document.hidden || performance.now() < st.due) return;
  net.send({ type: "events", limit: LIMIT });
  st.due = performance.now() + EVERY_MS * st.backoff;
}

/** "2/3" for a Swiss in its second of three rounds; an arena's end time instead of rounds. */
function roundText(e) {
  if (e.rounds) return `${e.round}/${e.rounds}`;
  if (e.ends_at && e.status === "running") return `ends ${new Date(e.ends_at * 1000).toLocaleTimeString()}`;
  return e.round ? String(e.round) : "";
}

function draw(events) {
  $("events").querySelector("tbody").replaceChildren(...events.map((e) => {
    const tr = el("tr");
    tr.dataset.event = e.event_id;
    const name = link(`/event/${encodeURIComponent(e.event_id)}`, e.name);
    name.setAttribute("aria-label", `event ${e.name} (${KINDS[e.kind] || e.kind}, ${e.status})`);
    tr.append(cell("Name", name), cell("Kind", KINDS[e.kind] || e.kind), cell("Variant", e.variant),
      cell("Status", e.status), cell("Round", roundText(e)), cell("Entrants", `${e.entrants}/${e.max_entrants}`));
    return tr;
  }));
  $("events-empty").hidden = events.length > 0;
}

// --- creating an event -----------------------------------------------------------------------------------------

const DEFAULT_CLOCK = "60+1";
const list = (text) => text.split(",").map((x) => x.trim()).filter(Boolean);
const number = (id) => ($(id).value.trim() === "" ? null : Number($(id).value));

/** The variant with its clock, as `kalah event create` makes it: the variant's own clock unless one is given
 * (60+1 when neither names one); a variant's clock and a different one given are refused. */
function eventVariant() {
  const text = $("ev-variant").value.replace(/\s/g, "");
  const v = parseVariant(text);  // throws on a text that is no variant
  const given = $("ev-clock").value.trim();
  if (given && v.clock && given !== v.clock) {
    throw new Error(`the variant says clock=${v.clock} and the time says ${given}: give one of them`);
  }
  if (v.clock) return text;
  return `${text.slice(0, -1)},clock=${given || DEFAULT_CLOCK})`;
}

/** The `event_create` message of the form (settings that do not fit are the server's to refuse, in one line). */
function createMessage() {
  const kind = $("ev-kind").value;
  const settings = { name: $("ev-name").value.trim(), kind, variant: eventVariant(), rated: $("ev-rated").checked,
    min_entrants: number("ev-min"), entry: $("ev-entry").value };
  if (kind === "swiss") settings.rounds = number("ev-rounds");
  if (kind === "arena") {
    settings.duration_s = number("ev-duration");
    settings.streak = $("ev-streak").checked;
  }
  if (kind === "round_robin") settings.cycles = Number($("ev-cycles").value);
  if (number("ev-max") !== null) settings.max_entrants = number("ev-max");
  if (number("ev-start-in") !== null) settings.start_at = Date.now() / 1000 + number("ev-start-in");
  if (number("ev-sanity")) settings.sanity_games = number("ev-sanity");
  if (settings.entry === "listed") settings.names = list($("ev-names").value);
  return { type: "event_create", settings, bots: list($("ev-bots").value) };
}

/** Show only the fields of the chosen kind and entry. */
function drawCreate() {
  for (const node of document.querySelectorAll("[data-kind]")) node.hidden = node.dataset.kind !== $("ev-kind").value;
  for (const node of document.querySelectorAll("[data-entry]")) node.hidden = node.dataset.entry !== $("ev-entry").value;
}

$("ev-kind").addEventListener("change", drawCreate);
$("ev-entry").addEventListener("change", drawCreate);
$("create").addEventListener("submit", (e) => {
  e.preventDefault();
  $("create-error").textContent = "";
  let msg;
  try {
    msg = createMessage();
  } catch (err) {
    $("create-error").textContent = err.message;
    return;
  }
  st.creating = net.sendOrSay(msg, $("create-error"));
});
drawCreate();

setInterval(poll, 500);
document.addEventListener("visibilitychange", poll);
net.start();
