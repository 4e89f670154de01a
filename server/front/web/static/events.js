// /events: the server's events (arenas, Swiss tournaments, round-robins), newest first, each linked to its page
// /event/ID. The list is a public read, asked for again every few seconds while the page is visible.

import { Link } from "./net.js";
import { cell, el, link, showIdentity, showLinkState } from "./ui.js";

const EVERY_MS = 5000;
const LIMIT = 50;
const KINDS = { arena: "arena", swiss: "Swiss", round_robin: "round-robin" };
const $ = (id) => document.getElementById(id);
const st = { due: 0, backoff: 1 };

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

setInterval(poll, 500);
document.addEventListener("visibilitychange", poll);
net.start();
