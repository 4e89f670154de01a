// The end of a game, for the player at the board: the result in words, the rating change, the link to the replay,
// and a rematch with the seats swapped. Against a hosted bot the rematch is a new game at once; against a person
// it is an open match of the same variant with the seats swapped, which the other player's page finds in the
// match list (`list`) and offers to join: no request beyond the published protocol.

import { outcomeText } from "./ui.js";

const POLL_MS = 2000;
const POLL_FOR_MS = 10 * 60 * 1000;  // an offer is looked for during ten minutes after the end

export class EndPanel {
  /** `state` is the match page's state (names, you, v, ratingRows); `go(id)` opens another match's page. */
  constructor({ net, matchId, $, state, go }) {
    Object.assign(this, { net, matchId, $, st: state, go });
    this.over = false;
    this.before = undefined;  // my rating row before the end (null: none yet), undefined: not known yet
    this.ratingAsks = 0;
    this.mine = null;         // the id of my rematch offer (an open match) once created
    this.offer = null;        // the id of the opponent's rematch offer seen in the list
    this.asking = false;
    this.timer = null;
    this.pollUntil = 0;
    $("rematch").addEventListener("click", () => this.rematch());
    $("accept").addEventListener("click", () => this.accept());
  }

  get me() {
    return this.net.guest && this.net.guest.name;
  }

  get opponent() {
    const { names, you } = this.st;
    return you ? names[you === "south" ? "north" : "south"] : null;
  }

  /** The game ended (`live`: seen happening, not loaded finished): draw the panel, ask for the new ratings. */
  finished(end, live) {
    const $ = this.$;
    $("controls").hidden = true;
    if (!this.st.you) return;
    this.over = true;
    $("end").hidden = false;
    const mine = end.winner === this.st.you;
    const words = outcomeText(end.winner ? (mine ? "You" : this.opponent || "Your opponent") : null, end.result,
      end.reason).replace("You wins", "You win");
    $("end-result").textContent = `${words}.`;
    if (live) {
      this.ratingAsks = 0;
      this.askRatings();
    } else this.drawRating();
    if (!this.isBot()) this.poll();
  }

  isBot() {
    return (this.opponent || "").startsWith("bot:");
  }

  askRatings() {
    this.ratingAsks += 1;
    setTimeout(() => this.net.send({ type: "standings", limit: 200 }), this.ratingAsks === 1 ? 200 : 1500);
  }

  /** New standings: remember my rating before the end, or show how the end changed it. */
  ratingsChanged() {
    const row = this.st.ratingRows.get(this.me) || null;
    if (!this.over) {
      this.before = row;
      return;
    }
    const changed = row && (!this.before || row.games !== this.before.games);
    if (!changed && this.ratingAsks > 0 && this.ratingAsks < 3) this.askRatings();
    this.drawRating();
  }

  drawRating() {
    const node = this.$("rating");
    const row = this.st.ratingRows.get(this.me) || null;
    const before = this.before;
    if (row && before && row.games !== before.games) {
      const delta = Math.round(row.rating) - Math.round(before.rating);
      node.textContent = `Your rating: ${Math.round(before.rating)} → ${Math.round(row.rating)} (${delta >= 0 ? "+" : ""}${delta}).`;
    } else if (row && before === null) {
      node.textContent = `Your first rating: ${Math.round(row.rating)} ± ${Math.round(1.96 * row.rd)}.`;
    } else if (row) {
      node.textContent = `Your rating: ${Math.round(row.rating)} ± ${Math.round(1.96 * row.rd)}.`;
    } else {
      // no rating after the end was seen: an unrated game (a game loaded already finished says nothing)
      node.textContent = before === undefined ? "" : "No rating change (an unrated game).";
    }
  }

  /** Rematch: the same variant, the seats swapped. */
  rematch() {
    const st = this.st;
    if (this.offer) return this.accept();
    const seat = st.you === "south" ? "north" : "south";
    const bot = this.isBot();
    const msg = bot ? { type: "create", variant: st.v.text, seat, opponent: this.opponent.slice(4) }
      : { type: "create", variant: st.v.text, seat };
    if (!this.net.sendOrSay(msg, this.$("rematch-state"))) return undefined;
    this.$("rematch").disabled = true;
    this.asking = true;
    this.$("rematch-state").textContent = bot ? "Starting the rematch…"
      : `Waiting for ${this.opponent} to accept the rematch…`;
    return undefined;
  }

  accept() {
    if (!this.offer || !this.net.sendOrSay({ type: "join", match_id: this.offer }, this.$("rematch-state"))) return;
    this.$("accept").disabled = true;
    this.asking = true;
  }

  /** Look for the opponent's rematch offer in the match list every few seconds. */
  poll() {
    clearTimeout(this.timer);
    this.pollUntil = this.pollUntil || performance.now() + POLL_FOR_MS;
    if (performance.now() > this.pollUntil) return;
    if (this.net.ready && !document.hidden) this.net.send({ type: "list" });
    this.timer = setTimeout(() => this.poll(), POLL_MS);
  }

  /** Messages about the rematch (another match than the page's); true when taken. */
  receive(msg) {
    if (msg.type === "matches") {
      if (this.over) this.offers(msg.matches);
      return true;
    }
    if (msg.type === "snapshot" && msg.match_id !== this.matchId && this.asking) {
      if (msg.status === "live" || this.isBot()) this.go(msg.match_id);
      else this.mine = msg.match_id;
      return true;
    }
    if (msg.type === "event" && msg.match_id !== this.matchId && msg.match_id === this.mine && msg.kind === "joined") {
      this.go(this.mine);
      return true;
    }
    if (msg.type === "error" && (msg.request === "create" || (msg.request === "join" && msg.match_id === this.offer))) {
      this.$("rematch-state").textContent = `No rematch: ${msg.message}`;
      this.$("rematch").disabled = false;
      this.$("accept").disabled = false;
      this.asking = false;
      return true;
    }
    return msg.match_id !== undefined && msg.match_id !== null && msg.match_id !== this.matchId;
  }

  /** The opponent's open match of this variant with the seats swapped, if listed: offered to join. */
  offers(matches) {
    const them = this.opponent;
    const st = this.st;
    if (!them || !st.you) return;
    const seat = st.you === "south" ? "north" : "south";  // where I sit in the rematch
    const other = seat === "south" ? "north" : "south";
    const found = matches.find((m) => m.status === "open" && m.variant === st.v.text && m.match_id !== this.mine
      && m[other] === them && !m[seat]);
    this.offer = found ? found.match_id : null;
    this.$("rematch-offer").hidden = !found;
    if (found) {
      this.$("rematch-offer-text").textContent = `${them} offers a rematch, you playing ${seat === "south" ? "South" : "North"}.`;
      if (this.mine && this.me < them) {  // both asked at once: one of the two offers is taken, the other dropped
        this.net.send({ type: "leave", match_id: this.mine });
        this.mine = null;
        this.accept();
      }
    }
  }
}
