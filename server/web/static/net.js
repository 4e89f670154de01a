// One websocket to the server, as this browser's guest: hello at once (a connection that does not say hello
// within the server's hello timeout is closed), the guest's token kept in localStorage so every page and every
// reconnection is the same identity, and a reconnection with backoff after any drop.

const STORE_KEY = "kalah.guest";
const MAX_HELLO_TRIES = 4;

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
  constructor({ onReady, onMessage, onState }) {
    Object.assign(this, { onReady, onMessage, onState: onState || (() => {}) });
    this.ws = null;
    this.ready = false;
    this.failures = 0;
    this.helloTries = 0;
    this.guest = storedGuest();
  }

  /** Connect to the server that served the page. */
  start() {
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

  /** Say hello: the stored guest's token, else a new guest name. */
  hello() {
    this.helloTries += 1;
    const msg = this.guest ? { type: "hello", name: this.guest.name, token: this.guest.token }
      : { type: "hello", name: guestName() };
    this.send(msg);
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
      this.guest = { name: msg.name, token: msg.token };
      storeGuest(this.guest);
      Object.assign(this, { ready: true, failures: 0, helloTries: 0 });
      this.onState("ready");
      this.onReady();
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
