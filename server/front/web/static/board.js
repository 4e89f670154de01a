// The board: South's houses along the bottom (bin 1 on the left), North's along the top, the stores at the ends
// (a narrow window turns it a quarter, by CSS only). Every mark is text as well as colour: the sown-from house
// says "from", each house that got seeds says "+n", a captured house says "taken", the mover's store says "+n".
// Each house is a button named for a screen reader ("house 3, 5 seeds"); only the houses `setPlayable` names
// react (the page asks the rules' twin which ones are legal), the others are disabled.

import { NORTH, SOUTH } from "./kalah.js";
import { el } from "./ui.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The key of each of a player's houses in the order the seeds go (up to 12: 1-9, 0, -, =, as in the terminal). */
export const HOUSE_KEYS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "-", "="];

/** The house (1..12) a key sows, or null. */
export function houseOfKey(key) {
  const house = HOUSE_KEYS.indexOf(key) + 1;
  return house > 0 ? house : null;
}

/** What the keys of `houses` houses are, in words: "1–6", "1–9, 0, -, =". */
export function keysText(houses) {
  const n = Math.min(houses, HOUSE_KEYS.length);
  return n <= 9 ? `1–${n}` : ["1–9", ...HOUSE_KEYS.slice(9, n)].join(", ");
}

/** A board of one variant inside `root`; `show` draws a position, `animate` sows one action seed by seed. */
export class BoardView {
  constructor(root, v, onChoose = null) {
    this.root = root;
    this.v = v;
    this.onChoose = onChoose;
    this.viewer = null;  // the side of the player at this board (SOUTH or NORTH), null for a spectator
    this.pits = new Map();
    const h = v.houses;
    root.replaceChildren();
    root.classList.add("board");
    root.style.setProperty("--houses", String(h));  // a phone sizes the houses to fit its screen
    root.classList.toggle("wide", h > 7);  // a wide board takes the window's width (the moves at its side stay narrow)
    const rows = el("div", "rows");
    const north = el("div", "row north");
    const south = el("div", "row south");
    for (let bin = h + 2; bin <= 2 * h + 1; bin++) north.append(this.pit(bin, "house"));
    for (let bin = 1; bin <= h; bin++) south.append(this.pit(bin, "house"));
    rows.append(north, south);
    root.append(this.pit(2 * h + 2, "store north"), rows, this.pit(h + 1, "store south"));
    this.rows = [south, north];
    this.fen = null;
    this.generation = 0;
  }

  pit(bin, cls) {
    const house = cls === "house";
    const node = el(house ? "button" : "div", `pit ${cls}`);
    node.dataset.bin = String(bin);
    if (house) {
      node.type = "button";
      node.disabled = true;
      node.addEventListener("click", () => {
        if (!node.disabled && this.onChoose) this.onChoose(bin);
      });
    }
    const count = el("span", "count", "0");
    const mark = el("span", "mark", "");
    const label = el("span", "bin", cls.startsWith("store") ? (bin === this.v.houses + 1 ? "S store" : "N store")
      : String(bin));
    node.append(mark, count, label);
    const choice = el("span", "choice", "");  // the house chosen to take a seed from (the opening transfer)
    node.append(choice);
    this.pits.set(bin, { node, count, mark, choice });
    return node;
  }

  /** The house number of a bin on its own side (1..h, the way the seeds go) and that side. */
  houseOf(bin) {
    const h = this.v.houses;
    return bin <= h ? [bin, SOUTH] : [bin - h - 1, NORTH];
  }

  setCount(bin, seeds) {
    const pit = this.pits.get(bin);
    pit.count.textContent = String(seeds);
    pit.count.dataset.digits = String(String(seeds).length);  // the count's size fits its house
    const amount = `${seeds} seed${seeds === 1 ? "" : "s"}`;
    if (pit.node.classList.contains("store")) {
      pit.node.setAttribute("aria-label", `${bin === this.v.houses + 1 ? "South" : "North"} store, ${amount}`);
      return;
    }
    const [house, side] = this.houseOf(bin);
    const whose = side === this.viewer ? "" : `${side === SOUTH ? "South" : "North"} `;
    pit.node.setAttribute("aria-label", `${whose}house ${house}, ${amount}`);
  }

  /** The side of the player at this board (its houses are named "house K"), null for a spectator. */
  setViewer(side) {
    this.viewer = side;
    this.root.classList.toggle("seated", side !== null);
    this.root.classList.toggle("flipped", side === NORTH);  // North's player sees its own houses nearest
    for (const [bin, pit] of this.pits) {
      const [house, owner] = this.houseOf(bin);
      if (pit.node.tagName === "BUTTON") {
        if (side === owner && house <= HOUSE_KEYS.length) pit.node.setAttribute("aria-keyshortcuts", HOUSE_KEYS[house - 1]);
        else pit.node.removeAttribute("aria-keyshortcuts");
      }
      this.setCount(bin, Number(pit.count.textContent));
    }
  }

  /** Let exactly these bins react to a click, a tap or Enter (an empty set: none). */
  setPlayable(bins, chosen = null) {
    for (const [bin, pit] of this.pits) {
      if (pit.node.tagName !== "BUTTON") continue;
      const on = bins.has(bin);
      pit.node.disabled = !on;
      pit.node.classList.toggle("playable", on);
      pit.node.classList.toggle("chosen", bin === chosen);
      pit.choice.textContent = bin === chosen ? "take 1" : "";
      if (bin === chosen) pit.node.setAttribute("aria-pressed", "true");
      else pit.node.removeAttribute("aria-pressed");
    }
  }

  clearMarks() {
    for (const { node, mark } of this.pits.values()) {
      mark.textContent = "";
      node.classList.remove("from", "sown", "taken", "gain", "last", "hit");
    }
  }

  /** Draw `position` (a kalah.js Position) and the marks of the `event` that led to it (or none) at once. */
  show(position, event) {
    this.generation += 1;  // stops a sowing still being drawn
    this.draw(position, event);
  }

  draw(position, event) {
    position.pits.forEach((seeds, i) => this.setCount(i + 1, seeds));
    this.clearMarks();
    for (const side of [SOUTH, NORTH]) {
      this.rows[side].classList.toggle("to-move", !position.end && position.toMove === side);
    }
    if (event) this.mark(event);
    const fen = position.fen();
    if (fen !== this.fen) {
      this.fen = fen;
      this.root.dataset.fen = fen;
    }
  }

  mark(event) {
    const sown = new Map();
    for (const bin of event.path) sown.set(bin, (sown.get(bin) || 0) + 1);
    const store = event.side === "south" ? this.v.houses + 1 : 2 * this.v.houses + 2;
    for (const [bin, n] of sown) {
      const pit = this.pits.get(bin);
      pit.node.classList.add(bin === store ? "gain" : "sown");
      pit.mark.textContent = `+${n}`;
    }
    const from = /^\d+$/.test(event.action) ? this.pits.get(Number(event.action)) : null;
    if (from) {
      from.node.classList.add("from");
      from.mark.textContent = sown.has(Number(event.action)) ? `from +${sown.get(Number(event.action))}` : "from";
    }
    if (event.path.length) this.pits.get(event.path[event.path.length - 1]).node.classList.add("last");
    if (event.capture) {
      const taken = this.pits.get(event.capture.bin);
      taken.node.classList.add("taken");
      taken.mark.textContent = "taken";
      const gain = this.pits.get(store);
      gain.node.classList.add("gain");
      gain.mark.textContent = `+${(sown.get(store) || 0) + event.capture.seeds}`;
    }
  }

  /** Sow `event` seed by seed from `before` (`msPerSeed` each, 0: at once), then draw `after`; false if cut short. */
  async animate(before, event, after, msPerSeed) {
    const generation = ++this.generation;
    const bin = /^\d+$/.test(event.action) ? Number(event.action) : null;
    if (msPerSeed > 0 && event.path.length && bin !== null) {
      this.draw(before, null);
      const counts = [...before.pits];
      const relay = this.v.relay;  // relay lifts again on the way: only the path is shown, not the counts
      if (!relay) {
        counts[bin - 1] = 0;
        this.setCount(bin, 0);
      }
      this.pits.get(bin).node.classList.add("from");
      for (const to of event.path) {
        const pit = this.pits.get(to);
        pit.node.classList.add("hit");
        if (!relay) this.setCount(to, ++counts[to - 1]);
        await sleep(msPerSeed);
        if (generation !== this.generation) return false;
        pit.node.classList.remove("hit");
      }
    }
    this.draw(after, event);
    return true;
  }
}
