// One websocket to the server, as this browser's guest: hello at once (a connection that does not say hello
// within the server's hello timeout is closed), the guest's token kept in localStorage so every page and every
// reconnection is the same identity, and a reconnection with backoff after any drop. The token is never put in
// an address or a log: it leaves the browser only in `hello` and when the visitor exports it. A browser signed in
// to an account holds its session only as an HttpOnly cookie (set by POST /account/login): the page asks
// GET /account/me who that is, and says `hello {account: true}`; the handshake carries the cookie.

const STORE_KEY = "kalah.guest";
const MAX_HELLO_TRIES = 4;
/** What a page says where a request of the player's was not sent for want of a connection. */
export const NOT_SENT = "Not sent: no connection to the server (reconnecting…). Press it again once the top right says "
  + "connected.";

const NAME = /^[A-Za-z0-9_.:-]{1,32}$/;
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/;

/** Why a display name would be refused (as the server checks names), or null when it is fine. */
export function nameProblem(name) {
  if (!NAME.test(name)) return "a name is 1 to 32 letters, digits, dots, dashes, underscores or colons";
  const lower = name.toLowerCase();
  if (lower.startsWith("bot:") || lower.startsWith("engine:")) return "names starting bot: or engine: are the server's bots' and outside engines'";
  return null;
}

/** Why a pasted token would be refused, or null when it has the form of one. */
export function tokenProblem(token) {
  return TOKEN.test(token) ? null : "a token is 16 to 128 letters, digits, dashes or underscores";
}

/** A fresh guest name: `guest-` and eight random letters or digits (names are unique on a server). */
export function guestName() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `guest-${Array.from(bytes, (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("")}`;
}

function storedGuest() {
  try {
    const guest = JSON.parse(localStorage.getItem(STORE_KEY) || "null");
    return guest && typeof guest.name === "string" && typeof guest.token === "string" ? guest : null;
  } catch {
    return null;
  }
}

function storeGuest(guest) {
  try {
    if (guest) localStorage.setItem(STORE_KEY, JSON.stringify(guest));
    else localStorage.removeItem(STORE_KEY);
  } catch {
    // storage refused (private window): the guest is new on each page
  }
}

/**
 * The server connection of a page. `onReady()` runs after every welcome (first and after each reconnection):
 * the page (re)sends its requests there. `onMessage(msg)` gets every other message; `onState(state)` gets
 * "connecting", "ready" or "reconnecting".
 */
export class Link {
  constructor({ onReady, onMessage, onState, onIdentityError }) {
    Object.assign(this, { onReady, onMessage, onState: onState || (() => {}),
      onIdentityError: onIdentityError || (() => {}) });
    this.change = null;  // a new identity asked for: {name} (a chosen name) or {token} (an imported one)
    this.ws = null;
    this.ready = false;
    this.failures = 0;
    this.helloTries = 0;
    this.guest = storedGuest();
    this.account = undefined;  // the signed-in account ({name, player_id, session_id}), null: none, undefined: unknown
    this.notSent = new Map();  // element -> what `sendOrSay` put there, cleared when the connection is back
  }

  /** Connect to the server that served the page. */
  start() {
    if (this.account === undefined) {
      fetch("/account/me", { credentials: "same-origin", cache: "no-store" })
        .then((r) => (r.ok ? r.json() : null), () => null)
        .then((me) => {
          this.account = me && me.signed_in && typeof me.name === "string" ? me : null;
          this.start();
        });
      return;
    }
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
    this.onState(this.failures ? "reconnecting" : "connecting");
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.addEventListener("open", () => this.hello());
    ws.addEventListener("message", (e) => this.receive(e.data));
    ws.addEventListener("close", () => {
      if (this.ws !== ws) return;
      this.ready = false;
      this.failures += 1;
      this.onState("reconnecting");
      const delay = Math.min(10000, 250 * 2 ** Math.min(this.failures, 6)) * (0.75 + Math.random() / 2);
      setTimeout(() => this.start(), delay);
    });
  }

  /** Say hello: an identity being changed to, else the stored guest's token, else a new guest name. */
  hello() {
    this.helloTries += 1;
    let msg;
    if (this.change && this.change.token) msg = { type: "hello", name: "imported", token: this.change.token };
    else if (this.change) msg = { type: "hello", name: this.change.name };
    else if (this.account) msg = { type: "hello", name: this.account.name, account: true };
    else if (this.guest) msg = { type: "hello", name: this.guest.name, token: this.guest.token };
    else msg = { type: "hello", name: guestName() };
    this.send(msg);
  }

  /** Play from now on as a new identity with this name, or as the identity of this token (from another browser or
   * the terminal client); the page reconnects. A refusal keeps the current identity and goes to `onIdentityError`. */
  switchTo(change) {
    this.change = change;
    this.reconnect();
  }

  /** Drop the connection and connect again at once (a new hello). */
  reconnect() {
    const old = this.ws;
    this.ws = null;
    this.ready = false;
    this.helloTries = 0;
    if (old) old.close();
    this.start();
  }

  /** Send a request of the player's if the connection is ready; else put `text` in the element `line` (never a click
   * that does nothing), until the connection is back. Whether it was sent. */
  sendOrSay(msg, line, text = NOT_SENT) {
    if (this.ready) {
      this.send(msg);
      return true;
    }
    line.textContent = text;
    this.notSent.set(line, text);
    return false;
  }

  /** Send one message if the connection is open (a page resends what it needs in `onReady`). */
  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  receive(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.type === "welcome") {
      this.change = null;
      this.seats = msg.seats || [];  // the unfinished matches where this identity holds a seat
      if (msg.account) {
        this.guest = { name: msg.name, token: null, account: true };
      } else {
        this.guest = { name: msg.name, token: msg.token };
        storeGuest(this.guest);
      }
      Object.assign(this, { ready: true, failures: 0, helloTries: 0 });
      for (const [line, said] of this.notSent) if (line.textContent === said) line.textContent = "";
      this.notSent.clear();
      this.onState("ready");
      this.onReady();
      return;
    }
    if (msg.type === "error" && msg.code === "bad_session") {
      // the account's session ended (signed out, revoked elsewhere): a guest from now on
      this.account = null;
      this.onMessage(msg);
      this.reconnect();
      return;
    }
    if (msg.type === "error" && msg.request === "hello" && this.change) {
      // the name is taken, or the token unknown here: keep the identity this browser had
      this.change = null;
      this.onIdentityError(msg);
      this.reconnect();
      return;
    }
    if (msg.type === "error" && msg.request === "hello" && this.helloTries < MAX_HELLO_TRIES) {
      // bad_token: the server forgot the guest (a new database); name_taken: a new name is drawn
      this.guest = null;
      storeGuest(null);
      this.hello();
      return;
    }
    this.onMessage(msg);
  }
}
