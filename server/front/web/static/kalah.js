// The rules of Kalah(h, s) in the browser: a twin of protocol/ (variant, tables, sowing, position, game).
// The same tables, the same text forms; tests/test_web_browser.py checks it against the Python rules.
// Pit indices are bin numbers minus one: South's houses 0..h-1, its store h, North's houses h+1..2h, its store 2h+1.

export const SOUTH = 0;
export const NORTH = 1;
export const SIDE_NAMES = ["south", "north"];
const REPETITION_LIMIT = 3;
const BOOLS = { extra: "extraTurn", clockwise: "clockwise", relay: "relay", majority: "majorityEnd",
  pie: "pie", transfer: "openingTransfer" };

/** A variant from its text form, e.g. `kalah(6,4,capture=empty,pie=on)`, with its compiled tables. */
export function parseVariant(text) {
  const m = /^kalah\((\d{1,3}),(\d{1,3})(?:,(.*))?\)$/.exec(String(text).replace(/\s/g, "").toLowerCase());
  if (!m) throw new Error(`bad variant ${text}`);
  const v = { text, houses: Number(m[1]), seeds: Number(m[2]), capture: "standard", extraTurn: true,
    clockwise: false, relay: false, leftover: "owner", majorityEnd: false, pie: false, openingTransfer: false,
    clock: null };
  for (const item of (m[3] || "").split(",").filter(Boolean)) {
    const [key, value] = item.split("=");
    if (key in BOOLS) v[BOOLS[key]] = value === "on";
    else if (key === "capture" || key === "leftover") v[key] = value;
    else if (key === "clock") v.clock = value;
    else throw new Error(`unknown variant option ${key}`);
  }
  v.canRepeat = v.clockwise || v.relay;
  v.tables = compile(v);
  return v;
}

function lap(h, side, start, clockwise) {
  const n = 2 * h + 2;
  const skip = side === SOUTH ? 2 * h + 1 : h;
  const step = clockwise ? -1 : 1;
  const out = [];
  let pit = start;
  while (out.length < n - 1) {
    pit = (((pit + step) % n) + n) % n;
    if (pit !== skip) out.push(pit);
  }
  return out;
}

function compile(v) {
  const h = v.houses;
  const n = 2 * h + 2;
  const isStore = (i) => i === h || i === n - 1;
  const laps = [SOUTH, NORTH].map((side) =>
    Array.from({ length: n }, (_, i) => (isStore(i) ? [] : lap(h, side, i, v.clockwise))));
  return {
    houses: h, pits: n, stores: [h, n - 1],
    houseRange: [[0, h], [h + 1, n - 1]],
    owner: Array.from({ length: n }, (_, i) => (i <= h ? SOUTH : NORTH)),
    opposite: Array.from({ length: n }, (_, i) => (isStore(i) ? -1 : 2 * h - i)),
    laps, totalSeeds: 2 * h * v.seeds,
  };
}

function sowLap(laps, pits, start) {
  const seeds = pits[start];
  pits[start] = 0;
  const ring = laps[start];
  const rounds = Math.floor(seeds / ring.length);
  const rest = seeds % ring.length;
  for (let k = 0; k < ring.length; k++) pits[ring[k]] += rounds + (k < rest ? 1 : 0);
  return ring[(seeds - 1) % ring.length];
}

function sow(v, pits, side, start) {
  const t = v.tables;
  const laps = t.laps[side];
  const store = t.stores[side];
  const segments = [[start, pits[start]]];
  let last = sowLap(laps, pits, start);
  if (v.relay) {
    const seen = new Set();
    while (last !== store && pits[last] > 1) {
      const key = `${pits.join(",")}|${last}`;
      if (seen.has(key)) break;
      seen.add(key);
      segments.push([last, pits[last]]);
      last = sowLap(laps, pits, last);
    }
    return { segments, capture: null, extra: last === store && v.extraTurn };
  }
  if (last === store) return { segments, capture: null, extra: v.extraTurn };
  if (pits[last] === 1 && t.owner[last] === side && v.capture !== "none") {
    const opp = t.opposite[last];
    if (pits[opp] || v.capture === "empty") {
      const gained = pits[opp] + 1;
      pits[store] += gained;
      pits[opp] = 0;
      pits[last] = 0;
      return { segments, capture: [opp, gained], extra: false };
    }
  }
  return { segments, capture: null, extra: false };
}

function rowSum(pits, [lo, hi]) {
  let sum = 0;
  for (let i = lo; i < hi; i++) sum += pits[i];
  return sum;
}

function endReason(v, pits) {
  const t = v.tables;
  if (!rowSum(pits, t.houseRange[SOUTH]) || !rowSum(pits, t.houseRange[NORTH])) return "empty";
  if (v.majorityEnd && (pits[t.stores[SOUTH]] * 2 > t.totalSeeds || pits[t.stores[NORTH]] * 2 > t.totalSeeds)) {
    return "majority";
  }
  return null;
}

function sweep(v, pits) {
  const t = v.tables;
  const left = t.houseRange.map((r) => rowSum(pits, r));
  for (const [lo, hi] of t.houseRange) for (let i = lo; i < hi; i++) pits[i] = 0;
  if (v.leftover === "discard") return;
  if (v.leftover === "emptier" && (left[SOUTH] === 0) !== (left[NORTH] === 0)) {
    pits[t.stores[left[SOUTH] === 0 ? SOUTH : NORTH]] += left[SOUTH] + left[NORTH];
    return;
  }
  pits[t.stores[SOUTH]] += left[SOUTH];
  pits[t.stores[NORTH]] += left[NORTH];
}

/** One notation token as an action: `{kind: "sow", bin}`, `{kind: "swap"}` or `{kind: "transfer", src, dst}`. */
export function parseAction(token) {
  const text = String(token).trim().toLowerCase();
  if (/^\d{1,2}$/.test(text)) return { kind: "sow", bin: Number(text) };
  if (text === "swap") return { kind: "swap" };
  const m = /^t(?:(\d{1,2})-(\d{1,2})|-)$/.exec(text);
  if (m) return m[1] === undefined ? { kind: "transfer", src: null, dst: null }
    : { kind: "transfer", src: Number(m[1]), dst: Number(m[2]) };
  throw new Error(`bad move ${token}`);
}

/** A position: pits in bin order, side to move, ply, pie/transfer/swap flags and the end reason. */
export class Position {
  constructor(v, pits, toMove, ply, pieOpen, transferPending, swapped, end) {
    Object.assign(this, { v, pits, toMove, ply, pieOpen, transferPending, swapped, end });
  }

  /** The starting position of a variant. */
  static initial(v) {
    const row = Array(v.houses).fill(v.seeds);
    return new Position(v, [...row, 0, ...row, 0], v.openingTransfer ? NORTH : SOUTH, 0, v.pie,
      v.openingTransfer, false, null);
  }

  /** A position from its text form `pits S|N ply flags [end]`. */
  static fromFen(v, text) {
    const m = /^([\d,]+) ([SN]) (\d{1,6}) ([ptw]*|-)(?: (\w+))?$/.exec(String(text).trim());
    if (!m) throw new Error(`bad position ${text}`);
    const pits = m[1].split(",").map(Number);
    if (pits.length !== v.tables.pits) throw new Error(`a ${v.text} position has ${v.tables.pits} pits`);
    return new Position(v, pits, m[2] === "S" ? SOUTH : NORTH, Number(m[3]), m[4].includes("p"),
      m[4].includes("t"), m[4].includes("w"), m[5] || null);
  }

  /** The text form, as the server writes it. */
  fen() {
    const flags = (this.pieOpen ? "p" : "") + (this.transferPending ? "t" : "") + (this.swapped ? "w" : "") || "-";
    return `${this.pits.join(",")} ${"SN"[this.toMove]} ${this.ply} ${flags}${this.end ? ` ${this.end}` : ""}`;
  }

  /** What repetition compares: pits, side to move and pending choices. */
  key() {
    return `${this.pits.join(",")}|${this.toMove}|${this.pieOpen}|${this.transferPending}`;
  }

  /** South's store minus North's. */
  get margin() {
    const [s, n] = this.v.tables.stores;
    return this.pits[s] - this.pits[n];
  }

  /** Bins the side to move may sow from. */
  legalBins() {
    if (this.end || this.transferPending) return [];
    const [lo, hi] = this.v.tables.houseRange[this.toMove];
    const out = [];
    for (let i = lo; i < hi; i++) if (this.pits[i]) out.push(i + 1);
    return out;
  }

  /** `[position after, event]` for one notation token; throws on an illegal action. */
  apply(token) {
    const action = parseAction(token);
    if (this.end) throw new Error("the game is over");
    const mover = this.toMove;
    const event = { ply: this.ply, side: SIDE_NAMES[mover], action: token, path: [], capture: null,
      extraTurn: false, end: null };
    const t = this.v.tables;
    if (action.kind === "swap") {
      if (!(this.pieOpen && mover === NORTH && !this.transferPending)) throw new Error("swap is not offered");
      return [new Position(this.v, this.pits, mover, this.ply + 1, false, false, !this.swapped, null), event];
    }
    const pits = [...this.pits];
    if (action.kind === "transfer") {
      if (!this.transferPending) throw new Error("no transfer is due");
      if (action.src !== null) {
        const house = (b) => t.owner[b - 1] !== undefined && t.opposite[b - 1] >= 0;
        if (!house(action.src) || !house(action.dst) || action.src === action.dst || !pits[action.src - 1]) {
          throw new Error(`bad transfer ${token}`);
        }
        pits[action.src - 1] -= 1;
        pits[action.dst - 1] += 1;
      }
      const end = endReason(this.v, pits);
      if (end) sweep(this.v, pits);
      event.end = end;
      return [new Position(this.v, pits, SOUTH, this.ply + 1, this.pieOpen && !end, false, this.swapped, end), event];
    }
    if (this.transferPending) throw new Error("the opening transfer comes first");
    if (!this.legalBins().includes(action.bin)) throw new Error(`bin ${action.bin} cannot be sown now`);
    const { segments, capture, extra } = sow(this.v, pits, mover, action.bin - 1);
    const end = endReason(this.v, pits);
    if (end) sweep(this.v, pits);
    const laps = t.laps[mover];
    for (const [start, seeds] of segments) {
      for (let k = 0; k < seeds; k++) event.path.push(laps[start][k % laps[start].length] + 1);
    }
    Object.assign(event, { capture: capture && { bin: capture[0] + 1, seeds: capture[1] }, extraTurn: extra, end });
    const next = extra ? mover : 1 - mover;
    const pos = new Position(this.v, pits, next, this.ply + 1, this.pieOpen && mover === SOUTH, false, this.swapped,
      end);
    return [pos, event];
  }

  /** This position ended for `reason` (repetition), with the leftover rule applied. */
  finish(reason) {
    const pits = [...this.pits];
    sweep(this.v, pits);
    return new Position(this.v, pits, this.toMove, this.ply, false, false, this.swapped, reason);
  }
}

/** Every step of a game record: `[{position, event}]`, the first with the starting position and no event. */
export function replay(v, tokens) {
  const steps = [{ position: Position.initial(v), event: null }];
  const seen = new Map([[steps[0].position.key(), 1]]);
  for (const token of tokens) {
    let [pos, event] = steps[steps.length - 1].position.apply(token);
    if (v.canRepeat) {
      const count = (seen.get(pos.key()) || 0) + 1;
      if (!pos.end && count >= REPETITION_LIMIT) {
        pos = pos.finish("repetition");
        event.end = "repetition";
      }
      seen.set(pos.key(), count);
    }
    steps.push({ position: pos, event });
  }
  return steps;
}
