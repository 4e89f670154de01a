// Small shared pieces of the pages: elements, names with ratings, clocks, results, move labels.

/** A new element with a class and text. */
export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** A link element. */
export function link(href, text) {
  const a = el("a", null, text);
  a.href = href;
  return a;
}

/** A table cell labelled by its column (a narrow screen shows the label before it), with text or a node. */
export function cell(label, content) {
  const td = el("td");
  td.dataset.label = label;
  if (content instanceof Node) td.append(content);
  else td.textContent = content;
  return td;
}

/** The match id named by the page's address, `/watch/ID` or `/game/ID`. */
export function matchIdFromPath() {
  return decodeURIComponent(location.pathname.split("/")[2] || "");
}

const REASONS = {
  empty: "a row is empty", majority: "a store holds most seeds", repetition: "third repetition",
  resign: "resignation", time: "time", abandonment: "abandonment", aborted: "aborted by the operator",
  forfeit: "forfeit (the engine broke the protocol)",
};

/** "bot:greedy wins by 7: a row is empty", "Draw: third repetition" (`who` null: a draw). */
export function outcomeText(who, result, reason) {
  if (reason === "aborted") return "No result: aborted by the operator";  // not a draw: unrated, no winner
  const why = REASONS[reason] || reason || "";
  const by = who && result !== null && result !== undefined ? ` by ${Math.abs(result)}` : "";
  return `${who ? `${who} wins${by}` : "Draw"}${why ? `: ${why}` : ""}`;
}

/** "South (bot:greedy) wins by 7: a row is empty", from a winning side and the names by side. */
export function resultText({ result, winner, reason }, names) {
  const who = winner && `${winner === "south" ? "South" : "North"}${names && names[winner] ? ` (${names[winner]})` : ""}`;
  return outcomeText(who || null, result, reason);
}

/** Ratings by player name from a `standings_table` message: "1523 ± 112" (a 95% interval). */
export function ratingsOf(table) {
  const out = new Map();
  for (const row of table.rows || []) out.set(row.name, `${Math.round(row.rating)} ± ${Math.round(1.96 * row.rd)}`);
  return out;
}

/** A player's name with its rating when it has one. */
export function nameWithRating(name, ratings) {
  if (!name) return "(open seat)";
  const rating = ratings && ratings.get(name);
  return rating ? `${name} (${rating})` : name;
}

/** Milliseconds as a clock: 4:05, 1:02:03, or 9.4 under ten seconds. */
export function clockText(ms) {
  if (ms === null || ms === undefined) return "";
  const left = Math.max(0, ms);
  if (left < 10000) return (Math.floor(left / 100) / 10).toFixed(1);
  const s = Math.floor(left / 1000);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

/** A move in the list: the notation token, then ↻ for an extra turn and ×n for a capture of n seeds. */
export function moveLabel(event) {
  let text = event.action;
  if (event.capture) text += ` ×${event.capture.seeds}`;
  if (event.extraTurn || event.extra_turn) text += " ↻";
  return text;
}

/** What a move did, in words. */
export function moveWords(event) {
  const side = event.side === "south" ? "South" : "North";
  if (event.action === "swap") return `${side} swapped sides (pie rule)`;
  if (event.action.startsWith("t")) return event.action === "t-" ? `${side} made no transfer`
    : `${side} moved one seed: ${event.action.slice(1).replace("-", " to ")}`;
  let text = `${side} sowed bin ${event.action}`;
  if (event.capture) text += `, captured ${event.capture.seeds} seeds (bin ${event.capture.bin} taken)`;
  if (event.extraTurn || event.extra_turn) text += `: extra turn, ${side} moves again`;
  return text;
}

/** The move list: one item per ply with its label and the position after it (`data-fen`). */
export function moveItem(event, fen) {
  const li = el("li", `move ${event.side}`);
  li.dataset.ply = String(event.ply + 1);
  li.dataset.fen = fen;
  li.title = moveWords(event);
  li.append(el("span", "who", event.side === "south" ? "S" : "N"), el("span", "token", moveLabel(event)));
  return li;
}

/** Show the connection's state in the page header. */
export function showLinkState(state) {
  const node = document.getElementById("link");
  if (!node) return;
  node.dataset.state = state;
  node.textContent = { ready: "connected", connecting: "connecting…", reconnecting: "reconnecting…" }[state] || state;
}

/** Show who this browser plays as in the page header. */
export function showIdentity(guest) {
  const node = document.getElementById("me");
  if (node && guest) node.textContent = `playing as ${guest.name}${guest.account ? " (signed in)" : ""}`;
}

/** Copy a text field's value to the clipboard, saying so in `status`; where that is refused, select it instead. */
export async function copyField(field, status) {
  try {
    await navigator.clipboard.writeText(field.value);
    status.textContent = "copied";
  } catch {
    field.select();
    status.textContent = "selected: copy it with Ctrl+C";
  }
}

/** Set a node's text only when it changes (a live region is announced again on every write). */
export function say(node, text) {
  if (node.textContent !== text) node.textContent = text;
}
