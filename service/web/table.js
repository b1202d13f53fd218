// The table: one game seen by one seat (or by the public), kept fresh, moves by tapping.

import * as api from "./api.js";
import {
  cardBack, cardFace, cardName, keyed, readingName, readingText, shortText, sortHand,
} from "./cards.js";
import { h, listText, replaceKeepingFocus } from "./dom.js";
import * as store from "./storage.js";

const POLL_MS = 2000;
const STREAM_RETRY_MS = 30000;
const LOG_SIZE = 60;

const cardsText = (codes) => codes.map(shortText).join(" ");
const codeOf = (c) => (typeof c === "string" ? c : c.card);

export class Table {
  /**
   * root: the element to draw into; gameId; seat: a seat number, or null to watch;
   * variants: {id: variant} from GET /v1/variants (for names and knob labels);
   * go(hash): navigate; justCreated: show the seat links first.
   */
  constructor(root, { gameId, seat, variants, go, justCreated = false }) {
    this.root = root;
    this.gameId = gameId;
    this.variants = variants || {};
    this.go = go;
    this.seat = null;
    this.token = null;
    this.view = null;
    this.legal = null;
    this.sel = new Set();
    this.groups = []; // staged melds: [[key, ...], ...]
    this.layoffs = []; // staged lay-offs: [{meld_id, keys, end}]
    this.fresh = new Set();
    this.problem = null;
    this.toast = null;
    this.offline = null;
    this.missing = null;
    this.modals = [];
    this.menuOpen = false;
    this.hintOpen = false;
    this.busy = false;
    this.announce = true;
    this.log = [];
    this.logVersion = 0;
    this.stream = null;
    this.streamRetryAt = 0;
    this.streamAfter = 0; // the id (version) of the last event a stream delivered
    this.loading = false;
    this.again = false;
    this.switching = false;
    this.stopped = false;
    this.prefs = store.prefs();
    this.skew = 0; // the referee's clock minus this device's (from server_time)
    this.clockShown = null;
    this.useSeat(seat);
    if (justCreated) this.modals.push({ type: "invite" });
    this.onVisible = () => { if (!document.hidden) this.refresh(); };
  }

  // ---- lifecycle -------------------------------------------------------------------------

  async start() {
    this.render();
    await this.refresh();
    if (this.stopped) return;
    this.openStream();
    this.timer = setInterval(() => this.tick(), POLL_MS);
    this.clockTimer = setInterval(() => this.tickClock(), 1000);
    document.addEventListener("visibilitychange", this.onVisible);
  }

  stop() {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.clockTimer);
    clearTimeout(this.toastTimer);
    document.removeEventListener("visibilitychange", this.onVisible);
    if (this.stream) this.stream.close();
    this.stream = null;
  }

  tick() {
    if (this.stopped || document.hidden) return;
    const open = this.stream && this.stream.readyState === EventSource.OPEN;
    if (!open) {
      if (!this.stream && window.EventSource && Date.now() > this.streamRetryAt) this.openStream();
      this.refresh();
    }
  }

  /** The event stream (the seat's own, through a stream ticket, or the public one) says
   * when anything happens; then the view is re-read. No polling while it is open. */
  async openStream() {
    if (!window.EventSource || this.stopped || this.missing || this.opening) return;
    this.opening = true;
    let url;
    try {
      // a stream resumes after the last event seen: a seat's stream cannot reconnect by
      // itself (its ticket works once, and a new EventSource sends no Last-Event-ID), so
      // it is opened again with a new ticket and ?after=
      const after = Math.max(this.streamAfter, this.view ? this.view.version : 0);
      url = await api.eventStreamUrl(this.gameId, after, this.token);
    } catch {
      this.streamRetryAt = Date.now() + STREAM_RETRY_MS;  // poll meanwhile
      return;
    } finally {
      this.opening = false;
    }
    if (this.stopped || this.stream) return;
    const es = new EventSource(url);
    let opened = false;
    es.addEventListener("open", () => { opened = true; });
    es.addEventListener("move", (ev) => {
      const version = Number(ev.lastEventId);
      if (version > this.streamAfter) this.streamAfter = version;
      if (!this.view || !(version <= this.view.version)) this.refresh();
    });
    es.addEventListener("error", () => {
      // a ticket works once: EventSource's own reconnect with it is refused, so a stream
      // that ended reconnects with a new ticket; one refused (503, 429) polls a while
      if (es.readyState === EventSource.CLOSED || this.token) {
        es.close();
        if (this.stream === es) this.stream = null;
        if (opened) this.openStream();
        else this.streamRetryAt = Date.now() + STREAM_RETRY_MS;
      }
    });
    this.stream = es;
  }

  useSeat(seat) {
    const saved = store.game(this.gameId);
    const token = seat !== null && seat !== undefined ? saved?.tokens?.[seat] : null;
    this.seat = token ? Number(seat) : null;
    this.token = token || null;
  }

  heldSeats() {
    const tokens = store.game(this.gameId)?.tokens || {};
    return Object.keys(tokens).map(Number).sort((a, b) => a - b);
  }

  switchSeat(seat) {
    if (seat === this.seat) return;
    this.useSeat(seat);
    if (this.stream) this.stream.close();  // the new seat's own stream, on the next tick
    this.stream = null;
    store.saveGame(this.gameId, { seat: this.seat });
    const hash = this.seat === null ? `#game=${this.gameId}&seat=watch`
      : `#game=${this.gameId}&seat=${this.seat}`;
    history.replaceState(null, "", hash);
    this.clearPlay();
    this.problem = null;
    this.legal = null;
    this.fresh = new Set();
    this.hintOpen = false;
    this.switching = true;
    this.modals = this.modals.filter((m) => m.type !== "pass");
    this.render();
    this.refresh();
  }

  clearPlay() {
    this.sel.clear();
    this.groups = [];
    this.layoffs = [];
  }

  // ---- reading the game -----------------------------------------------------------------

  async refresh() {
    if (this.stopped) return;
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = true;
    try {
      do {
        this.again = false;
        const view = this.token ? await api.getMe(this.gameId, this.token)
          : await api.getPublic(this.gameId);
        await this.accept(view);
      } while (this.again && !this.stopped);
      this.offline = null;
    } catch (err) {
      this.failed(err);
    } finally {
      this.loading = false;
      this.switching = false;
      this.render();
    }
  }

  failed(err) {
    const status = err.status;
    if (status === 404) {
      this.missing = err.problem;
      this.stop();
    } else if (status === 401 || status === 403) {
      this.problem = {
        title: "This seat's token is not accepted",
        detail: `${err.problem.detail || ""} You are now watching the public table.`.trim(),
        status,
      };
      this.useSeat(null);
    } else {
      this.offline = err.problem;
    }
  }

  /** Take a newer view (from a GET or a move's answer). */
  async accept(view) {
    const old = this.view;
    const sameSeat = old && (old.seat ?? null) === (view.seat ?? null);
    if (old && sameSeat && view.version < old.version) return;
    const changed = !old || !sameSeat || view.version !== old.version;
    this.view = view;
    if (view.server_time) this.skew = Date.parse(view.server_time) - Date.now();
    if (!changed) return;
    this.noteFresh(sameSeat ? old : null, view);
    this.pruneSelection();
    if (old && old.game_id === view.game_id) {
      this.noticeHandEnd(old, view);
      if (sameSeat) this.noticeTurnPass(old, view);
    }
    await Promise.all([this.loadLegal(view), this.loadLog(view)]);
  }

  noteFresh(old, view) {
    this.fresh = new Set();
    if (!old || !old.hand || !view.hand || old.hand_number !== view.hand_number) return;
    const before = {};
    for (const c of old.hand) before[c] = (before[c] || 0) + 1;
    const now = keyed(sortHand(view.hand, this.prefs.sort));
    const counts = {};
    for (const { code, key } of now) {
      counts[code] = (counts[code] || 0) + 1;
      if (counts[code] > (before[code] || 0)) this.fresh.add(key);
    }
  }

  pruneSelection() {
    const keys = new Set(this.handCards().map((c) => c.key));
    for (const k of [...this.sel]) if (!keys.has(k)) this.sel.delete(k);
    const gone = (k) => !keys.has(k);
    if (this.groups.some((g) => g.some(gone)) || this.layoffs.some((l) => l.keys.some(gone))) {
      this.groups = [];
      this.layoffs = [];
    }
  }

  async loadLegal(view) {
    this.legal = null;
    if (!this.token || view.status !== "playing") return;
    const mine = view.turn && view.turn.seat === this.seat;
    const cutIn = view.cut_in && view.cut_in.open;
    if (!mine && !cutIn) return;
    try {
      const legal = await api.getLegal(this.gameId, this.token);
      if (this.view && legal.version === this.view.version) this.legal = legal;
    } catch {
      this.legal = null; // hints are a nicety: the moves themselves are judged anyway
    }
  }

  async loadLog(view) {
    if (view.version <= this.logVersion) return;
    try {
      const after = Math.max(this.logVersion, view.version - LOG_SIZE);
      const page = await api.getEvents(this.gameId, after);
      for (const entry of page.entries) {
        if (entry.version > this.logVersion) {
          this.log.unshift(entry);
          this.logVersion = entry.version;
        }
      }
      this.log.length = Math.min(this.log.length, LOG_SIZE);
    } catch {
      /* the log is a nicety */
    }
  }

  noticeHandEnd(old, view) {
    const before = old.hands_played.length;
    if (view.hands_played.length > before) {
      for (const result of view.hands_played.slice(before)) {
        this.modals.push({ type: "hand", result, finished: view.status === "finished" });
      }
      this.clearPlay();
    }
  }

  noticeTurnPass(old, view) {
    if (!this.prefs.follow || view.status !== "playing" || !view.turn) return;
    const next = view.turn.seat;
    if (next === this.seat || !this.heldSeats().includes(next)) return;
    const moved = !old.turn || old.turn.seat !== next || old.hand_number !== view.hand_number;
    if (moved && !this.modals.some((m) => m.type === "pass")) {
      this.modals.push({ type: "pass", seat: next });
    }
  }

  // ---- derived facts ---------------------------------------------------------------------

  handCards() {
    const hand = this.view && this.view.hand && !this.switching ? this.view.hand : [];
    return keyed(sortHand(hand, this.prefs.sort));
  }

  codes(keys) {
    const byKey = new Map(this.handCards().map((c) => [c.key, c.code]));
    return keys.map((k) => byKey.get(k)).filter(Boolean);
  }

  name(seat) {
    const s = this.view?.seats?.[seat];
    if (s && s.name !== null && s.name !== undefined) return s.name;
    return seat === null || seat === undefined ? "The table" : `Seat ${seat + 1}`;
  }

  isGin() {
    return this.view?.variant === "gin";
  }

  /** Gin: the defender lays out its melds and lay-offs after a knock (GIN-LAYOFF). */
  layOutPhase() {
    return this.myTurn() && this.view.turn.phase === "lay_out";
  }

  /** A turn clock: what is left of the turn (ms, by the referee's clock), or null. */
  clockLeft() {
    const v = this.view;
    if (!v || v.status !== "playing" || !v.turn || !v.turn.deadline) return null;
    const left = Date.parse(v.turn.deadline) - (Date.now() + this.skew);
    return v.turn.expired ? Math.min(left, 0) : left;
  }

  /** Another seat held here may claim the match once the turn's time has run out. */
  canClaim() {
    const left = this.clockLeft();
    return left !== null && left <= 0 && Boolean(this.token) && this.view.turn.seat !== this.seat;
  }

  /** The device is being handed over: no hand on the page until the next player is ready. */
  handingOver() {
    return this.modals.some((m) => m.type === "pass");
  }

  myTurn() {
    const v = this.view;
    return Boolean(v && this.token && v.status === "playing" && v.turn && v.turn.seat === this.seat);
  }

  playPhase() {
    return this.myTurn() && this.view.turn.phase === "play";
  }

  staged() {
    return new Set([...this.groups.flat(), ...this.layoffs.flatMap((l) => l.keys)]);
  }

  variantName() {
    const v = this.view;
    return (v && this.variants[v.variant]?.name) || v?.variant || "Rummy";
  }

  /** From the legal moves: which cards can go on the table, which may be discarded. */
  hintFacts() {
    const legal = this.legal;
    const facts = { playable: new Set(), discardable: null, sources: null };
    if (!legal || !this.view) return facts;
    const sources = new Set();
    const discardable = new Set();
    for (const m of legal.moves) {
      if (m.type === "draw") sources.add(m.source);
      if (m.type === "discard") discardable.add(m.card);
      if (m.type === "meld") for (const meld of m.melds) for (const c of meld.cards) facts.playable.add(codeOf(c));
      if (m.type === "lay_off") for (const c of m.cards) facts.playable.add(codeOf(c));
      if (m.type === "swap_joker") facts.playable.add(m.card);
      if (m.type === "knock" || m.type === "lay_out") {
        for (const meld of m.melds || []) for (const c of meld.cards) facts.playable.add(codeOf(c));
        for (const l of m.lay_offs || []) for (const c of l.cards) facts.playable.add(codeOf(c));
      }
    }
    const example = legal.compound && legal.compound.example;
    if (example) for (const meld of example.melds || []) for (const c of meld.cards) facts.playable.add(codeOf(c));
    if (this.view.turn?.phase === "draw") facts.sources = sources;
    if (this.view.turn?.phase === "play" && !legal.truncated) facts.discardable = discardable;
    return facts;
  }

  // ---- moves -----------------------------------------------------------------------------

  /** Propose a move; a refused one keeps the selection, so that it can be corrected. */
  async send(move) {
    if (this.busy || !this.token) return;
    this.busy = true;
    this.hintOpen = false;
    this.render();
    try {
      const seen = this.view.version;
      const answer = await api.postMove(this.gameId, this.token, move, seen);
      this.problem = null;
      this.clearPlay();
      for (const ev of answer.events || []) {
        if (ev.type === "dealt") this.flash(`Hand ${ev.hand_number} is dealt`);
        if (ev.type === "penalty") this.flash("Penalty: you forgot to call your last card");
      }
      await this.accept(answer.game);
    } catch (err) {
      this.refused(err);
      if (err.status === 412 || err.status === 0) this.refresh();
    } finally {
      this.busy = false;
      this.render();
      this.focusProblem();
    }
  }

  refused(err) {
    const p = { ...err.problem, status: err.status };
    if (err.status === 412) {
      p.title = "The table changed";
      p.detail = "Another move was made before yours arrived, so yours was not applied. "
        + "Here is the table as it is now: look again and retry.";
    } else if (err.status === 422 && !p.title) {
      p.title = "Move refused";
    }
    this.problem = p;
  }

  focusProblem() {
    if (!this.problem) return;
    const el = this.root.querySelector(".problem");
    if (el) el.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  flash(text) {
    this.toast = text;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => { this.toast = null; this.render(); }, 3500);
  }

  draw(source) {
    this.send({ type: "draw", source });
  }

  meldAll() {
    const groups = [...this.groups];
    if (this.sel.size) groups.push([...this.sel]);
    if (!groups.length) return;
    const move = { type: "meld", melds: groups.map((g) => ({ cards: this.codes(g) })) };
    if (this.layoffs.length) {
      move.lay_offs = this.layoffs.map((l) => {
        const spec = { meld_id: l.meld_id, cards: this.codes(l.keys) };
        if (l.end) spec.end = l.end;
        return spec;
      });
    }
    this.send(move);
  }

  stageGroup() {
    if (!this.sel.size) return;
    this.groups.push([...this.sel]);
    this.sel.clear();
    this.problem = null;
    this.render();
  }

  layOff(meld, end) {
    if (!this.sel.size) return;
    const keys = [...this.sel];
    if (this.groups.length || this.layOutPhase()) {
      // part of the meld action (an opening counts its lay-offs): staged with it
      this.layoffs.push({ meld_id: meld.meld_id, keys, end });
      this.sel.clear();
      this.render();
      return;
    }
    const move = { type: "lay_off", meld_id: meld.meld_id, cards: this.codes(keys) };
    if (end) move.end = end;
    this.send(move);
  }

  swapJoker(meld) {
    const [code] = this.codes([...this.sel]);
    if (code) this.send({ type: "swap_joker", meld_id: meld.meld_id, card: code });
  }

  discard() {
    const [code] = this.codes([...this.sel]);
    if (!code) return;
    const move = { type: "discard", card: code };
    if (this.callsLastCard()) move.announce = true;
    this.send(move);
  }

  /** The staged melds (and the selection, as one more) as a move's `melds`. */
  stagedMelds(withSelection) {
    const groups = [...this.groups];
    if (withSelection && this.sel.size) groups.push([...this.sel]);
    return groups.map((g) => ({ cards: this.codes(g) }));
  }

  stagedLayOffs() {
    return this.layoffs.map((l) => {
      const spec = { meld_id: l.meld_id, cards: this.codes(l.keys) };
      if (l.end) spec.end = l.end;
      return spec;
    });
  }

  /** Gin: discard the one selected card and lay out the staged melds (GIN-KNOCK). */
  knock() {
    const [code] = this.codes([...this.sel]);
    if (code) this.send({ type: "knock", card: code, melds: this.stagedMelds(false) });
  }

  /** Gin: the defender's melds and lay-offs, in one move (GIN-LAYOFF). */
  layOut() {
    this.send({ type: "lay_out", melds: this.stagedMelds(true), lay_offs: this.stagedLayOffs() });
  }

  /** Resign or abort, once the player has said yes. */
  confirmMove(type) {
    const texts = {
      resign: ["Resign the match?", "The match ends now and the other players win. This cannot be undone.", "Resign"],
      abort: ["Abort the game?", "The game ends with no winner. This is only possible before the first move.", "Abort the game"],
    }[type];
    this.modals.unshift({
      type: "confirm", title: texts[0], text: texts[1], yes: texts[2],
      onYes: () => this.send({ type }),
    });
    this.render();
  }

  /** The host cancels a game (waiting or in play), once it has said yes. */
  confirmCancel() {
    const host = store.game(this.gameId)?.host;
    if (!host) return;
    this.modals.unshift({
      type: "confirm", title: "Cancel this game?",
      text: "Nobody can join or play it any more.", yes: "Cancel the game",
      onYes: async () => {
        try {
          await this.accept(await api.cancelGame(this.gameId, host));
          this.problem = null;
        } catch (err) {
          this.refused(err);
        }
        this.render();
      },
    });
    this.render();
  }

  /** The next match: each seat held here asks for its own token of it, then the table
   * opens it as the same seat. */
  async rematch() {
    if (this.busy) return;
    const saved = store.game(this.gameId) || {};
    const tokens = saved.tokens || {};
    this.busy = true;
    this.render();
    let next = saved.rematch && store.game(saved.rematch) ? saved.rematch : null;
    try {
      for (const seat of this.heldSeats()) {
        if (next && store.game(next)?.tokens?.[seat]) continue;
        try {
          const got = await api.rematch(this.gameId, tokens[seat]);
          next = got.game_id;
          store.saveGame(next, {
            variant: this.view.variant, names: this.view.seats.map((x) => x.name),
            tokens: { [got.seat]: got.token }, seat: this.seat,
          });
          store.saveGame(this.gameId, { rematch: next });
        } catch (err) {
          if (err.problem?.code !== "REMATCH_CLAIMED") throw err;
          next = next || err.problem.game_id; // taken before, on this device or another
        }
      }
      this.problem = null;
      if (next) this.go(`#game=${encodeURIComponent(next)}&seat=${this.seat ?? "watch"}`);
    } catch (err) {
      this.refused(err);
    } finally {
      this.busy = false;
      this.render();
    }
  }

  /** R51-LAST: the discard that leaves one card carries the call, unless unticked. */
  callsLastCard() {
    const v = this.view;
    return Boolean(v && v.rules && "last_card_call" in v.rules && v.hand && v.hand.length === 2
      && this.announce);
  }

  toggle(key) {
    if (this.sel.has(key)) this.sel.delete(key);
    else this.sel.add(key);
    this.render();
  }

  selectCodes(codes) {
    const free = this.handCards().filter((c) => !this.staged().has(c.key));
    this.sel.clear();
    for (const code of codes) {
      const hit = free.find((c) => c.code === code && !this.sel.has(c.key));
      if (hit) this.sel.add(hit.key);
    }
  }

  // ---- drawing ---------------------------------------------------------------------------

  render() {
    if (this.stopped && !this.missing) return;
    document.body.classList.toggle("four-colour", Boolean(this.prefs.fourColour));
    if (this.missing) {
      replaceKeepingFocus(this.root, [this.renderMissing()]);
      return;
    }
    const v = this.view;
    const page = h("div", { class: "table-page" },
      this.renderTop(),
      h("main", { class: "table-main", id: "main", tabindex: "-1" },
        this.menuOpen ? this.renderMenu() : null,
        this.offline ? h("p", { class: "offline", role: "status" },
          `${this.offline.title || "Connection problem"}: ${this.offline.detail || ""} Retrying…`) : null,
        !v ? h("p", { class: "loading" }, "Loading the table…")
          : v.status === "waiting" ? [this.renderWaiting(), this.renderLog()]
            : [this.renderCentre(), this.renderMelds(), this.renderScores(), this.renderLog()]),
      v ? this.renderDock() : null,
      this.renderModal());
    replaceKeepingFocus(this.root, [page]);
    const modal = this.root.querySelector(".modal");
    if (modal && !modal.contains(document.activeElement)) {
      (modal.querySelector(".btn.primary") || modal.querySelector("button"))?.focus();
    }
  }

  renderMissing() {
    return h("div", { class: "lobby-page" },
      h("main", { class: "card-panel narrow" },
        h("h1", {}, "Game not found"),
        h("p", {}, this.missing.detail || "No such game: it may have expired."),
        h("p", {}, h("button", {
          class: "btn primary", onclick: () => { store.forgetGame(this.gameId); this.go("#"); },
        }, "Back to the games"))));
  }

  renderTop() {
    const v = this.view;
    const sub = [];
    if (v) {
      sub.push(v.status === "waiting" ? "waiting for players" : `Hand ${v.hand_number}`);
      sub.push(matchEndText(v.rules?.match_end));
      if (v.arranged) sub.push("arranged deal");
    }
    return h("header", { class: "topbar" },
      h("div", { class: "topbar-row" },
        h("a", { class: "icon-btn", href: "#", "aria-label": "All games", title: "All games" }, "‹"),
        h("div", { class: "title" },
          h("h1", {}, this.variantName()),
          h("p", { class: "sub" }, sub.join(" · "))),
        h("button", {
          class: ["icon-btn", this.menuOpen && "on"], "aria-expanded": String(this.menuOpen),
          "aria-controls": "menu", "aria-label": "Seat links and settings",
          title: "Seat links and settings", "data-fkey": "menu",
          onclick: () => { this.menuOpen = !this.menuOpen; this.render(); },
        }, "⋯")),
      v ? this.renderSeats() : null);
  }

  renderSeats() {
    const v = this.view;
    const held = new Set(this.heldSeats());
    const chips = v.seats.map((s) => {
      const mine = s.seat === this.seat;
      const turn = Boolean(v.status === "playing" && v.turn && v.turn.seat === s.seat);
      const canSwitch = held.has(s.seat);
      const bits = s.open ? ["open seat"]
        : [`${s.hand_count} card${s.hand_count === 1 ? "" : "s"}`, `${fmt(s.total)} pts`];
      const dead = v.gin?.deadwood?.[s.seat];
      if (dead !== null && dead !== undefined) bits.push(`deadwood ${dead}`);
      const badges = [];
      if (mine) badges.push(h("span", { class: "badge you" }, "you"));
      if (turn) badges.push(h("span", { class: "badge turn" }, { draw: "to draw", lay_out: "to lay out" }[v.turn.phase] || "to play"));
      if (s.seat === v.dealer && v.status !== "waiting") badges.push(h("span", { class: "badge dealer", title: "dealer" }, v.seats.length > 3 ? "D" : "dealer"));
      if (s.opened) badges.push(h("span", { class: "badge ok" }, "opened"));
      if (s.out_of_match) badges.push(h("span", { class: "badge out" }, "out"));
      const contract = s.contract ? h("span", { class: "contract", title: s.contract.text },
        `Contract ${s.contract.number}${s.contract.down ? " ✓" : ""}`) : null;
      const label = [this.name(s.seat), mine ? "you" : null, ...bits, turn ? `to ${v.turn.phase}` : null,
        s.seat === v.dealer ? "dealer" : null,
        s.opened ? "opened" : null,
        s.contract ? `contract ${s.contract.number}: ${s.contract.text}${s.contract.down ? ", laid down" : ""}` : null,
        canSwitch && !mine ? "switch to this seat" : null]
        .filter(Boolean).join(", ");
      const body = [
        h("span", { class: "seat-name" }, this.name(s.seat)),
        h("span", { class: "seat-meta" }, bits.join(" · ")),
        badges.length ? h("span", { class: "badges" }, badges) : null,
        contract,
      ];
      const cls = ["seat-chip", mine && "mine", turn && "turn", s.out_of_match && "gone"];
      if (canSwitch) {
        return h("button", {
          class: cls, "aria-pressed": String(mine), "aria-label": label, "data-fkey": `seat:${s.seat}`,
          onclick: () => this.switchSeat(s.seat),
        }, body);
      }
      return h("div", { class: cls, "aria-label": label, role: "group" }, body);
    });
    return h("nav", { class: "seats", "aria-label": held.size > 1 ? "Seats (tap one to play it)" : "Seats" }, chips);
  }

  renderMenu() {
    const v = this.view;
    const held = this.heldSeats();
    const toggle = (name, text, help) => h("label", { class: "switch" },
      h("input", {
        type: "checkbox", checked: this.prefs[name], "data-fkey": `pref:${name}`,
        onchange: (e) => {
          store.setPref(name, e.target.checked);
          this.prefs = store.prefs();
          this.render();
        },
      }),
      h("span", {}, text, help ? h("small", {}, help) : null));
    return h("section", { class: "panel menu", id: "menu", "aria-label": "Seat links and settings" },
      h("h2", {}, "Seat links"),
      held.length ? this.renderSeatLinks() : h("p", {}, "This device holds no seat of this game: you are watching."),
      h("p", { class: "small" }, "Watch without a seat: ",
        h("a", { href: `#game=${this.gameId}&seat=watch`, onclick: (e) => { e.preventDefault(); this.switchSeat(null); } },
          "public view")),
      h("h2", {}, "Settings"),
      toggle("follow", "Pass & play: follow the turn", "When the turn passes to another seat held on this device, offer to switch to it."),
      toggle("hints", "Show hints on cards", "Mark cards you could meld or lay off, and cards you may not discard."),
      toggle("fourColour", "Four-colour suits", "♣ green and ♦ blue, easier to tell apart."),
      v ? h("h2", {}, "Rules of this game") : null,
      v ? this.renderRules() : null,
      h("p", {}, h("button", {
        class: "btn subtle", onclick: () => {
          if (window.confirm("Forget this game on this device? Its seat tokens are lost here.")) {
            store.forgetGame(this.gameId);
            this.go("#");
          }
        },
      }, "Forget this game on this device")));
  }

  renderSeatLinks() {
    const tokens = store.game(this.gameId)?.tokens || {};
    const rows = Object.keys(tokens).map(Number).sort((a, b) => a - b).map((seat) => {
      const link = `${location.origin}/play#game=${encodeURIComponent(this.gameId)}&token=${encodeURIComponent(tokens[seat])}`;
      const input = h("input", {
        type: "text", readonly: true, value: link, class: "link-input",
        "aria-label": `Link for ${this.name(seat)}'s seat`, onfocus: (e) => e.target.select(),
      });
      const copy = async () => {
        try {
          await navigator.clipboard.writeText(link);
        } catch {
          input.select();
          document.execCommand("copy");
        }
        this.flash(`Link for ${this.name(seat)} copied`);
        this.render();
      };
      return h("li", { class: "seat-link" },
        h("span", { class: "seat-link-name" }, this.name(seat)),
        input,
        h("span", { class: "seat-link-actions" },
          h("button", { class: "btn small", onclick: copy, "aria-label": `Copy ${this.name(seat)}'s link` }, "Copy"),
          navigator.share ? h("button", {
            class: "btn small", "aria-label": `Share ${this.name(seat)}'s link`,
            onclick: () => navigator.share({ title: `Rummy: ${this.name(seat)}'s seat`, url: link }).catch(() => {}),
          }, "Share") : null));
    });
    return [
      h("p", { class: "small" }, "Each link opens one seat, with its hand, on any device. Send each player their own link: whoever has it plays that seat."),
      h("ul", { class: "seat-links" }, rows),
    ];
  }

  renderRules() {
    const v = this.view;
    const knobs = this.variants[v.variant]?.knobs || [];
    const byName = Object.fromEntries(knobs.map((k) => [k.name, k]));
    return h("dl", { class: "rules" }, Object.entries(v.rules || {}).flatMap(([name, value]) => [
      h("dt", {}, humanize(name), byName[name] ? h("span", { class: "rule-id" }, byName[name].rule) : null),
      h("dd", {}, name === "match_end" ? matchEndText(value) : valueText(value)),
    ]));
  }

  /** A game with open seats, before it deals: who sits where, the join code and link. */
  renderWaiting() {
    const v = this.view;
    const saved = store.game(this.gameId) || {};
    const open = v.seats.filter((s) => s.open).length;
    const code = saved.joinCode;
    const link = code ? `${location.origin}/play#join=${encodeURIComponent(code)}` : null;
    const copy = async () => {
      try {
        await navigator.clipboard.writeText(link);
      } catch {
        this.root.querySelector("#join-share")?.select();
        document.execCommand("copy");
      }
      this.flash("Link copied");
      this.render();
    };
    return h("section", { class: "panel waiting", "aria-labelledby": "waiting-h" },
      h("h2", { id: "waiting-h" }, `Waiting for ${open} more player${open === 1 ? "" : "s"}`),
      h("p", {}, "The cards are dealt as soon as every seat is taken."),
      h("ol", { class: "waiting-seats" }, v.seats.map((s) => h("li", { class: s.open ? "open" : null },
        s.open ? h("span", { class: "muted" }, "Open seat") : h("strong", {}, s.name),
        s.seat === this.seat ? h("span", { class: "badge you" }, "you") : null))),
      code ? [
        h("p", {}, "Join code: ", h("strong", { class: "join-code", id: "join-code" }, code)),
        h("label", { for: "join-share", class: "small" }, "Or send this link:"),
        h("div", { class: "row" },
          h("input", { type: "text", readonly: true, value: link, id: "join-share", class: "link-input", onfocus: (e) => e.target.select() }),
          h("button", { class: "btn small", onclick: copy, "aria-label": "Copy the join link" }, "Copy"),
          navigator.share ? h("button", {
            class: "btn small", "aria-label": "Share the join link",
            onclick: () => navigator.share({ title: "Join my rummy game", url: link }).catch(() => {}),
          }, "Share") : null),
        h("p", { class: "small" }, "Each player opens the link (or types the code under “Join a game” at /play) on their own device, and sees only their own hand."),
      ] : null,
      saved.host ? h("p", {}, h("button", {
        class: "btn subtle", "data-fkey": "cancel-game", onclick: () => this.confirmCancel(),
      }, "Cancel the game")) : null);
  }

  renderCentre() {
    const v = this.view;
    const mine = this.myTurn();
    const phase = v.turn?.phase;
    const facts = this.prefs.hints ? this.hintFacts() : { playable: new Set(), sources: null };
    const staged = this.groups.length || this.layoffs.length;
    const oneSelected = this.sel.size === 1 && !staged;
    const canDraw = mine && phase === "draw";
    const canDiscardHere = mine && phase === "play" && oneSelected;
    const selCode = oneSelected ? this.codes([...this.sel])[0] : null;
    const dim = (source) => canDraw && facts.sources && !facts.sources.has(source);

    const stock = h("button", {
      class: ["pile", "stock", canDraw && "live", dim("stock") && "dim"],
      disabled: !canDraw || this.busy, "data-fkey": "pile:stock",
      "aria-label": `Stock, ${v.stock_count} cards${canDraw ? ". Draw from the stock" : ""}`,
      onclick: () => this.draw("stock"),
    }, v.stock_count ? cardBack("pile") : h("span", { class: "card card-pile empty" }),
    h("span", { class: "pile-count", "aria-hidden": "true" }, v.stock_count),
    h("span", { class: "pile-label", "aria-hidden": "true" }, "Stock"));

    const top = v.discard_top;
    let discardLabel = `Discard pile, ${v.discard_count} card${v.discard_count === 1 ? "" : "s"}`;
    if (top) discardLabel += `, ${cardName(top)} on top`;
    if (canDraw && top) discardLabel += `. Take the ${cardName(top)}`;
    if (canDiscardHere) discardLabel = `Discard the ${cardName(selCode)}`;
    const discard = h("button", {
      class: ["pile", "discard", (canDraw || canDiscardHere) && "live", canDraw && dim("discard") && "dim"],
      disabled: !((canDraw && top) || canDiscardHere) || this.busy, "data-fkey": "pile:discard",
      "aria-label": discardLabel,
      onclick: () => (canDraw ? this.draw("discard") : this.discard()),
    }, top ? cardFace(top, { size: "pile" }) : h("span", { class: "card card-pile empty" }),
    h("span", { class: "pile-count", "aria-hidden": "true" }, v.discard_count),
    h("span", { class: "pile-label", "aria-hidden": "true" }, canDiscardHere ? "Discard here" : "Discard"));

    const last = this.log[0];
    return h("section", { class: "centre", "aria-label": "Stock and discard pile" },
      h("div", { class: "piles" }, stock, discard),
      h("div", { class: "last-move" },
        last ? [h("span", { class: "muted" }, "Last move"), h("p", {}, this.entryText(last))]
          : h("p", { class: "muted" }, "No move yet.")));
  }

  renderMelds() {
    const v = this.view;
    const canAct = ((this.playPhase() && !this.isGin()) || this.layOutPhase())
      && !v.discard_only && this.sel.size > 0 && !this.busy;
    const owners = [...new Set(v.melds.map((m) => m.owner))].sort((a, b) => a - b);
    const body = owners.length ? owners.map((owner) => h("div", { class: "meld-owner" },
      h("h3", {}, `${this.name(owner)}${owner === this.seat ? " (you)" : ""}`),
      h("div", { class: "meld-list" }, v.melds.filter((m) => m.owner === owner).map((m) => this.renderMeld(m, canAct)))))
      : h("p", { class: "muted empty-table" }, "No melds on the table yet.");
    return h("section", { class: "melds", "aria-labelledby": "melds-h" },
      h("h2", { id: "melds-h" }, "Table", v.melds.length ? h("span", { class: "count" }, ` ${v.melds.length} meld${v.melds.length === 1 ? "" : "s"}`) : null),
      canAct ? h("p", { class: "tip" }, this.groups.length
        ? "Lay-offs tapped now join this meld action (◀ ▶: which end of a run)."
        : `Lay off the selected cards on a meld (◀ ▶: which end of a run)${v.melds.some((m) => m.wilds?.length) ? ", or swap one for a joker" : ""}.`) : null,
      body);
  }

  renderMeld(m, canAct) {
    const wildAt = new Map((m.wilds || []).map((w) => [w.index, w]));
    const faces = m.cards.map((code, i) => {
      const w = wildAt.get(i);
      return cardFace(code, { size: "meld", as: w ? w.as : null, wild: Boolean(w) });
    });
    const kindText = m.kind === "run" ? "run" : "set";
    const readings = (m.wilds || []).map((w) => {
      const code = w.card || m.cards[w.index];
      return h("li", { class: "reading-line" },
        h("span", { class: "wild-name" }, code === "JK" ? "★ Joker" : `${shortText(code)} (wild)`),
        " stands for ", h("strong", {}, readingText(w.as)));
    });
    const label = `${this.name(m.owner)}'s ${kindText} ${m.meld_id}: ${m.cards.map((c, i) => {
      const w = wildAt.get(i);
      return w ? `${cardName(c)} as ${readingName(w.as)}` : cardName(c);
    }).join(", ")}`;
    const actions = [];
    if (canAct) {
      const selText = cardsText(this.codes([...this.sel]));
      const stagedPrefix = this.groups.length ? "+ " : "";
      if (m.kind === "run") {
        actions.push(h("button", {
          class: "btn small", "data-fkey": `lay:${m.meld_id}:low`,
          "aria-label": `Lay off ${selText} at the low end of ${m.meld_id}`,
          onclick: () => this.layOff(m, "low"),
        }, `${stagedPrefix}◀ Lay off`));
        actions.push(h("button", {
          class: "btn small", "data-fkey": `lay:${m.meld_id}:high`,
          "aria-label": `Lay off ${selText} at the high end of ${m.meld_id}`,
          onclick: () => this.layOff(m, "high"),
        }, `${stagedPrefix}Lay off ▶`));
      } else {
        actions.push(h("button", {
          class: "btn small", "data-fkey": `lay:${m.meld_id}`,
          "aria-label": `Lay off ${selText} on ${m.meld_id}`,
          onclick: () => this.layOff(m, null),
        }, `${stagedPrefix}Lay off`));
      }
      if (m.wilds?.length && this.sel.size === 1 && !this.groups.length) {
        actions.push(h("button", {
          class: "btn small", "data-fkey": `swap:${m.meld_id}`,
          "aria-label": `Swap ${selText} for the wild in ${m.meld_id}`,
          onclick: () => this.swapJoker(m),
        }, "Swap ★"));
      }
    }
    return h("div", { class: ["meld", `meld-${m.kind}`], role: "group", "aria-label": label, "data-meld": m.meld_id },
      h("div", { class: "meld-head" },
        h("span", { class: "meld-kind" }, kindText),
        h("span", { class: "meld-id" }, m.meld_id)),
      h("div", { class: ["meld-cards", m.cards.length > 6 && "long"] }, faces),
      readings.length ? h("ul", { class: "readings" }, readings) : null,
      actions.length ? h("div", { class: "meld-actions" }, actions) : null);
  }

  renderScores() {
    const v = this.view;
    const hp = v.hands_played || [];
    const names = v.seats.map((s) => s.name);
    const head = h("tr", {}, h("th", { scope: "col" }, "Hand"), names.map((n) => h("th", { scope: "col" }, n)));
    const rows = hp.map((r) => {
      const flags = handFlags(r);
      return h("tr", {},
        h("th", { scope: "row" }, String(r.hand_number), flags.length ? h("small", {}, flags.join(", ")) : null),
        r.scores.map((score, seat) => h("td", { class: seat === r.went_out ? "went-out" : null },
          fmt(score), seat === r.went_out ? h("span", { class: "out-mark", title: "went out", "aria-label": "went out" }, " ★") : null)));
    });
    const foot = h("tr", {}, h("th", { scope: "row" }, "Total"),
      v.seats.map((s) => h("td", { class: v.winners?.includes(s.seat) ? "winner" : null }, fmt(s.total))));
    return h("section", { class: "scores", "aria-labelledby": "scores-h" },
      h("h2", { id: "scores-h" }, "Scores"),
      v.status === "finished" ? h("p", { class: "result", role: "status" }, this.resultText()) : null,
      h("div", { class: "table-wrap" },
        h("table", {},
          h("caption", {}, hp.length ? `Points per hand · ${matchEndText(v.rules?.match_end)}`
            : `No hand finished yet · ${matchEndText(v.rules?.match_end)}`),
          h("thead", {}, head), h("tbody", {}, rows), h("tfoot", {}, foot))));
  }

  knockText() {
    const k = this.view.gin?.knock;
    if (!k) return "";
    const who = this.name(k.seat);
    if (k.kind === "big_gin") return `${who} went big gin.`;
    if (k.kind === "gin") return `${who} went gin.`;
    return `${who} knocked with ${k.deadwood} deadwood.`;
  }

  resultText() {
    const v = this.view;
    if (v.status === "aborted") return "This game was called off: no winner.";
    const winners = (v.winners || []).map((s) => this.name(s));
    const end = v.end;
    const why = end?.reason === "resigned" ? `${this.name(end.seat)} resigned. `
      : end?.reason === "timeout" ? `${this.name(end.seat)} ran out of time. ` : "";
    if (!winners.length) return `${why}Match over.`;
    const you = this.seat !== null && v.winners.includes(this.seat);
    return `${why}Match over — ${listText(winners)} ${winners.length > 1 ? "win" : "wins"}${you ? " (that's you!)" : ""}.`;
  }

  renderLog() {
    return h("details", { class: "log panel" },
      h("summary", {}, `Moves (${this.logVersion})`),
      this.log.length ? h("ol", { reversed: true }, this.log.map((e) => h("li", { value: e.version }, this.entryText(e))))
        : h("p", { class: "muted" }, "No move yet."));
  }

  entryText(entry) {
    const who = this.name(entry.seat);
    const parts = [];
    for (const ev of entry.events || []) {
      const t = ev.type;
      if (t === "draw") {
        parts.push(ev.source === "discard" ? `${who} took ${ev.card ? shortText(ev.card) : "the discard"} from the discard pile`
          : `${who} drew from the stock`);
      } else if (t === "meld") {
        const melds = (ev.melds || []).map((m) => cardsText(m.cards));
        parts.push(`${who} melded ${melds.join(" · ")}`);
      } else if (t === "lay_off") {
        parts.push(`${who} laid off ${cardsText((ev.cards || entry.move.cards || []).map(codeOf))} on ${ev.meld_id || entry.move.meld_id}`);
      } else if (t === "swap_joker") {
        parts.push(`${who} swapped ${shortText(ev.card || entry.move.card)} for a joker in ${ev.meld_id || entry.move.meld_id}`);
      } else if (t === "take_from_meld") {
        parts.push(`${who} took cards from the table to meld them anew`);
      } else if (t === "discard") {
        parts.push(`${who} discarded ${shortText(ev.card)}`);
      } else if (t === "last_card") {
        parts.push(`${who}: last card!`);
      } else if (t === "penalty") {
        parts.push(`${who} draws penalty cards`);
      } else if (t === "stock_rebuilt") {
        parts.push("the stock was rebuilt from the discard pile");
      } else if (t === "hand_end") {
        const out = ev.went_out ?? null;
        parts.push(out === null ? "The hand ended with nobody out" : `${this.name(out)} went out`);
      } else if (t === "game_end") {
        parts.push("the match is over");
      } else if (t === "dealt") {
        parts.push("a new hand was dealt");
      } else if (t === "cut_in" || t === "cut_in_claim") {
        parts.push(`${this.name(ev.seat ?? entry.seat)} cut in`);
      } else if (t === "pass") {
        parts.push(`${who} passed`);
      } else if (t === "knock") {
        parts.push(ev.kind === "knock" ? `${who} knocked (deadwood ${ev.deadwood})` : `${who} went ${ev.kind === "big_gin" ? "big gin" : "gin"}`);
      } else if (t === "lay_out") {
        parts.push(`${who} laid out (deadwood ${ev.deadwood})`);
      } else if (t === "resign") {
        parts.push(`${who} resigned`);
      } else if (t === "abort") {
        parts.push(`${who} called the game off`);
      } else if (t === "claim_timeout" || t === "timeout") {
        parts.push(`${who} claimed the match: the time ran out`);
      } else if (t === "seat_taken") {
        parts.push(`${ev.name} took seat ${ev.seat + 1}`);
      } else if (t === "seat_opened") {
        parts.push(`seat ${ev.seat + 1} was opened again`);
      } else if (t === "game_cancelled") {
        parts.push("the host cancelled the game");
      } else if (t === "rematch" || t === "rematch_joined") {
        parts.push(`${who} joined the rematch`);
      } else if (t === "token_rotated") {
        parts.push(`${who} got a new seat link`);
      } else if (t !== "deal_revealed") {
        parts.push(`${who}: ${t.replace(/_/g, " ")}`);
      }
    }
    return parts.join("; ") || `${who} moved`;
  }

  // ---- the dock: status, hand, actions ---------------------------------------------------

  renderDock() {
    const v = this.view;
    const hidden = this.handingOver();
    let hand = null;
    if (v.status === "playing" && !this.token) {
      hand = h("p", { class: "watching" }, "You are watching: hands stay hidden. Open a seat's link to play it.");
    } else if (v.status === "playing" && hidden) {
      hand = h("p", { class: "watching handover" }, "The hand is hidden while the device is passed on.");
    } else if (v.status === "playing") {
      hand = this.renderHand();
    }
    return h("section", { class: "dock", "aria-label": "Your hand and actions" },
      h("p", { class: ["status", this.myTurn() && "my-turn"], role: "status", "aria-live": "polite" }, this.statusText()),
      this.renderClock(),
      this.renderProblem(),
      this.toast ? h("p", { class: "toast", role: "status" }, this.toast) : null,
      this.hintOpen && !hidden ? this.renderHints() : null,
      hidden ? null : this.renderTray(),
      hand,
      h("div", { class: "actions" }, this.renderActions()),
      this.renderMatchActions());
  }

  /** The turn clock (C-CLOCK), counting down to the view's deadline by the referee's clock. */
  renderClock() {
    const left = this.clockLeft();
    this.clockShown = left === null ? null : left > 0;
    if (left === null) return null;
    const who = this.name(this.view.turn.seat);
    const claim = this.canClaim() ? h("button", {
      class: "btn primary small", "data-fkey": "claim", disabled: this.busy,
      onclick: () => this.send({ type: "claim_timeout" }),
    }, "Claim victory") : null;
    return h("div", { class: ["clock", left <= 0 && "expired"] },
      h("span", { class: "clock-text", role: "timer", "aria-live": "off" }, clockText(left, who)), claim);
  }

  /** Once a second: the clock's text; a full redraw when the time runs out. */
  tickClock() {
    if (this.stopped) return;
    const left = this.clockLeft();
    if (left === null) return;
    if (this.clockShown !== (left > 0)) {
      this.render();
      return;
    }
    const el = this.root.querySelector(".clock-text");
    if (el) el.textContent = clockText(left, this.name(this.view.turn.seat));
  }

  /** Resign (any time in play) and abort (before the first move), each with a confirm. */
  renderMatchActions() {
    const v = this.view;
    if (!this.token || v.status !== "playing") return null;
    const moved = this.log.some((e) => e.move) || v.hand_number > 1 || this.logVersion < v.version;
    return h("div", { class: "match-actions" },
      moved ? null : h("button", {
        class: "btn small subtle", "data-fkey": "abort", disabled: this.busy, onclick: () => this.confirmMove("abort"),
      }, "Abort"),
      h("button", {
        class: "btn small subtle", "data-fkey": "resign", disabled: this.busy, onclick: () => this.confirmMove("resign"),
      }, "Resign"));
  }

  statusText() {
    const v = this.view;
    if (this.switching) return "Switching seat…";
    if (v.status === "finished") return this.resultText();
    if (v.status === "aborted") return "This game was called off: no winner.";
    if (v.status === "waiting") return "Waiting for players to join…";
    const turn = v.turn;
    const who = this.name(turn.seat);
    if (turn.phase === "lay_out") {
      if (turn.seat !== this.seat || !this.token) return `${this.knockText()} ${who} lays out.`;
      return `${this.knockText()} Lay out your melds${v.gin.knock.kind === "knock" ? " and lay off cards on the knocker's melds" : ""}, then tap Lay out.`;
    }
    if (this.token && turn.seat === this.seat && v.gin) {
      if (turn.phase === "draw" && (v.gin.upcard_offer === this.seat || v.gin.wall)) {
        return v.gin.wall ? "Your turn: take the discard to knock with it, or pass (the hand is then a draw)."
          : `Your turn: take the upcard ${v.discard_top ? shortText(v.discard_top) : ""} or pass.`;
      }
      if (turn.phase === "play") return `Your turn: discard a card, or knock (deadwood ${v.gin.knock_limit} or less): put your melds aside with + Meld, select the card to discard, then Knock.`;
    }
    if (!this.token) return `${who} to ${turn.phase}.`;
    if (turn.seat !== this.seat) {
      if (v.cut_in?.open) return `${who} to ${turn.phase}. The discard may be claimed (cut in).`;
      return `Waiting for ${who} to ${turn.phase}…`;
    }
    if (turn.phase === "draw") return "Your turn: draw from the stock, or take the discard.";
    if (v.discard_only) return "Your turn: as the dealer, you start by discarding one card.";
    const bits = [];
    const me = v.seats[this.seat];
    if (v.rules?.opening_points && !me.opened) bits.push(`Open with ${v.rules.opening_points}+ points${v.rules.opening_requires_clean_run ? " and a clean run" : ""}.`);
    if (me.contract && !me.contract.down) bits.push(`Contract: ${me.contract.text}.`);
    if (v.taken_discard) bits.push(`You took ${shortText(v.taken_discard)}: it cannot go straight back.`);
    return ["Your turn: select cards to meld or lay off, then discard one.", ...bits].join(" ");
  }

  renderProblem() {
    const p = this.problem;
    if (!p) return null;
    const reasons = Array.isArray(p.reasons) && p.reasons.length > 1 ? p.reasons : [];
    const errors = Array.isArray(p.errors) ? p.errors : [];
    return h("div", { class: "problem", role: "alert" },
      h("div", { class: "problem-head" },
        h("strong", {}, p.status === 422 ? "Move refused" : (p.title || "Error")),
        p.code ? h("code", { class: "chip code" }, p.code) : null,
        p.rule ? h("span", { class: "chip rule" }, `rule ${p.rule}`) : null,
        h("button", {
          class: "icon-btn small", "aria-label": "Dismiss", title: "Dismiss", "data-fkey": "problem:close",
          onclick: () => { this.problem = null; this.render(); },
        }, "✕")),
      p.detail && !reasons.length ? h("p", { class: "problem-detail" }, p.detail) : null,
      reasons.length ? h("ul", { class: "reasons" }, reasons.map((r) => h("li", {},
        h("span", { class: "problem-detail" }, r.detail), " ",
        r.code !== p.code ? h("code", { class: "chip code" }, r.code) : null, " ",
        h("span", { class: "chip rule" }, r.rule)))) : null,
      errors.length ? h("ul", { class: "reasons" }, errors.map((e) => h("li", {}, h("code", {}, e.field), ": ", e.message))) : null);
  }

  renderTray() {
    if (!this.groups.length && !this.layoffs.length) return null;
    const items = this.groups.map((g, i) => h("li", { class: "tray-item" },
      h("span", { class: "tray-label" }, `Meld ${i + 1}`),
      h("span", { class: "mini-cards" }, this.codes(g).map((c) => cardFace(c, { size: "mini" }))),
      h("button", {
        class: "icon-btn small", "aria-label": `Take back meld ${i + 1}`, title: "Take back",
        onclick: () => { this.groups.splice(i, 1); this.render(); },
      }, "✕")));
    const lays = this.layoffs.map((l, i) => h("li", { class: "tray-item" },
      h("span", { class: "tray-label" }, `On ${l.meld_id}${l.end ? ` (${l.end})` : ""}`),
      h("span", { class: "mini-cards" }, this.codes(l.keys).map((c) => cardFace(c, { size: "mini" }))),
      h("button", {
        class: "icon-btn small", "aria-label": `Take back the lay-off on ${l.meld_id}`, title: "Take back",
        onclick: () => { this.layoffs.splice(i, 1); this.render(); },
      }, "✕")));
    return h("div", { class: "tray", "aria-label": "Melds to lay down together" },
      h("p", { class: "tray-title" }, "To lay down in one action:"),
      h("ul", {}, items, lays));
  }

  renderHand() {
    const v = this.view;
    const cardsNow = this.handCards();
    const staged = this.staged();
    const facts = this.prefs.hints ? this.hintFacts() : { playable: new Set(), discardable: null };
    const selectable = (this.playPhase() || this.layOutPhase()) && !this.busy;
    const head = h("div", { class: "hand-head" },
      h("h2", {}, this.seat !== null ? `${this.name(this.seat)}'s hand` : "Hand",
        h("span", { class: "count" }, ` ${cardsNow.length} card${cardsNow.length === 1 ? "" : "s"}`)),
      h("div", { class: "hand-tools" },
        this.myTurn() ? h("button", {
          class: ["btn", "small", "subtle", "hint-btn", this.hintOpen && "on"], "aria-expanded": String(this.hintOpen),
          "data-fkey": "hint", disabled: this.busy,
          onclick: async () => {
            this.hintOpen = !this.hintOpen;
            if (this.hintOpen && !this.legal) await this.loadLegal(this.view);
            this.render();
          },
        }, "Hint") : null,
        this.sel.size ? h("button", {
          class: "btn small subtle", "data-fkey": "clear", onclick: () => { this.sel.clear(); this.render(); },
          "aria-label": `Clear the selection (${this.sel.size} card${this.sel.size === 1 ? "" : "s"})`,
        }, "Clear") : null,
        h("button", {
          class: "btn small subtle", "data-fkey": "sort",
          "aria-label": `Sorted by ${this.prefs.sort}: sort by ${this.prefs.sort === "suit" ? "rank" : "suit"}`,
          onclick: () => {
            this.prefs.sort = this.prefs.sort === "suit" ? "rank" : "suit";
            store.setPref("sort", this.prefs.sort);
            this.clearPlay();
            this.render();
          },
        }, this.prefs.sort === "suit" ? "By suit" : "By rank")));
    if (this.switching) return h("div", { class: "hand-area" }, head, h("p", { class: "muted" }, "Loading…"));
    const buttons = cardsNow.map(({ code, key }) => {
      const isStaged = staged.has(key);
      const pressed = this.sel.has(key);
      const el = cardFace(code, { tag: "button" });
      el.classList.add("in-hand");
      if (pressed) el.classList.add("selected");
      if (isStaged) el.classList.add("staged");
      if (this.fresh.has(key)) el.classList.add("fresh");
      const notes = [];
      if (this.fresh.has(key)) notes.push("just drawn");
      if (selectable && facts.playable.has(code) && !isStaged) {
        el.classList.add("playable");
        notes.push("can be melded or laid off");
      }
      if (selectable && facts.discardable && !facts.discardable.has(code) && !isStaged) {
        el.classList.add("no-discard");
        notes.push("may not be discarded now");
      }
      if (v.taken_discard === code && this.myTurn()) el.classList.add("taken");
      if (isStaged) notes.push("in a meld to lay down");
      el.setAttribute("aria-label", [cardName(code), ...notes].join(", "));
      el.setAttribute("aria-pressed", String(pressed));
      el.dataset.fkey = `card:${key}`;
      el.dataset.key = key;
      el.disabled = !selectable || isStaged;
      el.addEventListener("click", () => this.toggle(key));
      return el;
    });
    return h("div", { class: "hand-area" }, head,
      h("div", { class: "hand", role: "group", "aria-label": `Your hand, ${cardsNow.length} cards` }, buttons));
  }

  renderActions() {
    const v = this.view;
    if (v.status === "finished" || v.status === "aborted") {
      const next = store.game(this.gameId)?.rematch;
      const again = v.status === "finished" && this.token ? h("button", {
        class: "btn primary", "data-fkey": "rematch", disabled: this.busy, onclick: () => this.rematch(),
      }, next && store.game(next) ? "Go to the rematch" : v.rematch ? "Join the rematch" : "Rematch") : null;
      return [again, h("button", {
        class: ["btn", !again && "primary"], "data-fkey": "new", onclick: () => this.go("#new"),
      }, "New game")];
    }
    if (!this.token || v.status !== "playing") return [];
    if (this.handingOver()) return [];
    if (this.isGin() && this.myTurn()) return this.renderGinActions();
    if (!this.myTurn()) {
      const cut = this.legal?.moves?.find((m) => m.type === "cut_in");
      return [cut ? h("button", {
        class: "btn primary", "data-fkey": "cut", onclick: () => this.send({ type: "cut_in" }),
      }, `Cut in${v.discard_top ? ` (claim ${shortText(v.discard_top)})` : ""}`) : null];
    }
    if (v.turn.phase === "draw") {
      return [
        h("button", {
          class: "btn primary", "data-fkey": "draw:stock", disabled: this.busy, onclick: () => this.draw("stock"),
        }, "Draw from stock"),
        v.discard_top ? h("button", {
          class: ["btn", this.legal && !this.legal.moves.some((m) => m.type === "draw" && m.source === "discard") && "dim"],
          "data-fkey": "draw:discard", disabled: this.busy,
          "aria-label": `Take the ${cardName(v.discard_top)} from the discard pile`,
          onclick: () => this.draw("discard"),
        }, `Take ${shortText(v.discard_top)}`) : null,
      ];
    }
    const n = this.sel.size;
    const staged = this.groups.length + this.layoffs.length;
    const selCodes = this.codes([...this.sel]);
    const out = [];
    if (!v.discard_only) {
      if (staged) {
        const count = this.groups.length + (n ? 1 : 0);
        out.push(h("button", {
          class: "btn primary", "data-fkey": "meld", disabled: this.busy || !count,
          onclick: () => this.meldAll(),
        }, `Lay down ${count} meld${count === 1 ? "" : "s"}${this.layoffs.length ? ` + ${this.layoffs.length} lay-off${this.layoffs.length === 1 ? "" : "s"}` : ""}`));
        out.push(h("button", {
          class: "btn", "data-fkey": "group", disabled: this.busy || !n,
          "aria-label": "Add the selected cards as another meld", onclick: () => this.stageGroup(),
        }, "+ Another meld"));
        out.push(h("button", {
          class: "btn subtle", "data-fkey": "cancel", onclick: () => { this.clearPlay(); this.render(); },
        }, "Cancel"));
      } else {
        out.push(h("button", {
          class: ["btn", n >= 3 && "primary"], "data-fkey": "meld", disabled: this.busy || !n,
          "aria-label": n ? `Meld ${cardsText(selCodes)}` : "Meld (select cards first)",
          onclick: () => this.meldAll(),
        }, "Meld"));
        out.push(h("button", {
          class: "btn", "data-fkey": "group", disabled: this.busy || !n,
          "aria-label": "Keep the selected cards as one meld and select another",
          title: "Lay down several melds in one action", onclick: () => this.stageGroup(),
        }, "+ Meld more"));
      }
    }
    if (!staged) {
      out.push(h("button", {
        class: ["btn", (n === 1 || v.discard_only) && "primary"], "data-fkey": "discard",
        disabled: this.busy || n !== 1,
        "aria-label": n === 1 ? `Discard ${cardName(selCodes[0])}` : "Discard (select one card)",
        onclick: () => this.discard(),
      }, n === 1 ? `Discard ${shortText(selCodes[0])}` : "Discard"));
    }
    if (v.rules && "last_card_call" in v.rules && v.hand && v.hand.length === 2 && !staged) {
      out.push(h("label", { class: "switch inline" },
        h("input", {
          type: "checkbox", checked: this.announce, "data-fkey": "announce",
          onchange: (e) => { this.announce = e.target.checked; },
        }),
        h("span", {}, "Call “last card”")));
    }
    return out;
  }

  /** Gin: take or pass the upcard, draw, knock with staged melds, the defender's lay-out. */
  renderGinActions() {
    const v = this.view;
    const phase = v.turn.phase;
    const n = this.sel.size;
    const selCodes = this.codes([...this.sel]);
    const staged = this.groups.length + this.layoffs.length;
    const cancel = staged ? h("button", {
      class: "btn subtle", "data-fkey": "cancel", onclick: () => { this.clearPlay(); this.render(); },
    }, "Cancel") : null;
    if (phase === "draw") {
      const offer = v.gin.upcard_offer === this.seat || v.gin.wall;
      return [
        offer ? null : h("button", {
          class: "btn primary", "data-fkey": "draw:stock", disabled: this.busy, onclick: () => this.draw("stock"),
        }, "Draw from stock"),
        v.discard_top ? h("button", {
          class: ["btn", offer && "primary"], "data-fkey": "draw:discard", disabled: this.busy,
          "aria-label": `Take the ${cardName(v.discard_top)} from the discard pile`, onclick: () => this.draw("discard"),
        }, `Take ${shortText(v.discard_top)}`) : null,
        offer ? h("button", {
          class: "btn", "data-fkey": "pass", disabled: this.busy, onclick: () => this.send({ type: "pass" }),
        }, "Pass") : null,
      ];
    }
    if (phase === "lay_out") {
      const melds = this.groups.length + (n ? 1 : 0);
      return [
        h("button", {
          class: "btn primary", "data-fkey": "layout", disabled: this.busy, onclick: () => this.layOut(),
        }, `Lay out${melds ? ` ${melds} meld${melds === 1 ? "" : "s"}` : ""}${this.layoffs.length ? ` + ${this.layoffs.length} lay-off${this.layoffs.length === 1 ? "" : "s"}` : ""}`),
        h("button", {
          class: "btn", "data-fkey": "group", disabled: this.busy || !n,
          "aria-label": "Put the selected cards aside as one meld", onclick: () => this.stageGroup(),
        }, "+ Meld"),
        cancel,
      ];
    }
    return [
      h("button", {
        class: "btn", "data-fkey": "group", disabled: this.busy || !n,
        "aria-label": "Put the selected cards aside as one meld to knock with", onclick: () => this.stageGroup(),
      }, "+ Meld"),
      h("button", {
        class: ["btn", staged && n === 1 && "primary"], "data-fkey": "knock", disabled: this.busy || n !== 1,
        "aria-label": n === 1 ? `Knock, discarding ${cardName(selCodes[0])}` : "Knock (select the card to discard)",
        onclick: () => this.knock(),
      }, n === 1 ? `Knock, discard ${shortText(selCodes[0])}` : "Knock"),
      staged ? null : h("button", {
        class: ["btn", n === 1 && "primary"], "data-fkey": "discard", disabled: this.busy || n !== 1,
        "aria-label": n === 1 ? `Discard ${cardName(selCodes[0])}` : "Discard (select one card)",
        onclick: () => this.discard(),
      }, n === 1 ? `Discard ${shortText(selCodes[0])}` : "Discard"),
      cancel,
    ];
  }

  renderHints() {
    const legal = this.legal;
    const v = this.view;
    let body;
    if (!legal) {
      body = h("p", {}, this.myTurn() ? "Looking for legal moves…" : "Hints come when it is your turn.");
    } else {
      const items = [];
      const moves = legal.moves || [];
      const play = (move, text) => h("button", { class: "btn small", onclick: () => this.send(move) }, text);
      const select = (codes, text = "Select") => h("button", {
        class: "btn small subtle",
        onclick: () => { this.clearPlay(); this.selectCodes(codes); this.hintOpen = false; this.render(); },
      }, text);
      for (const m of moves.filter((x) => x.type === "draw")) {
        items.push(h("li", {}, m.source === "stock" ? "Draw from the stock" : `Take ${shortText(v.discard_top)} from the discard pile`, " ", play(m, "Do it")));
      }
      const compound = legal.compound;
      if (compound) {
        if (compound.exists && compound.example) {
          const groups = compound.example.melds.map((m) => m.cards.map(codeOf));
          const label = { contract: "You can lay down your contract: ", all_at_once: "You can go out all at once: " }[compound.kind] || "You can open: ";
          items.push(h("li", {}, h("strong", {}, label), groups.map(cardsText).join(" · "), " ",
            h("button", {
              class: "btn small subtle",
              onclick: () => {
                this.clearPlay();
                for (const g of groups) { this.selectCodes(g); this.groups.push([...this.sel]); this.sel.clear(); }
                this.hintOpen = false;
                this.render();
              },
            }, "Prepare it"), " ", play(compound.example, "Do it")));
        } else if (compound.kind === "opening") {
          items.push(h("li", {}, `No opening yet (${v.rules?.opening_points ?? ""}+ points${v.rules?.opening_requires_clean_run ? " with a clean run" : ""}).`));
        }
      }
      const melds = moves.filter((x) => x.type === "meld")
        .sort((a, b) => b.melds[0].cards.length - a.melds[0].cards.length).slice(0, 6);
      for (const m of melds) {
        const codes = m.melds.flatMap((x) => x.cards.map(codeOf));
        items.push(h("li", {}, "Meld ", h("strong", {}, cardsText(codes)), " ", select(codes), " ", play(m, "Do it")));
      }
      for (const m of moves.filter((x) => x.type === "lay_off").slice(0, 6)) {
        items.push(h("li", {}, "Lay off ", h("strong", {}, cardsText(m.cards.map(codeOf))), ` on ${m.meld_id}${m.end ? ` (${m.end} end)` : ""} `, play(m, "Do it")));
      }
      for (const m of moves.filter((x) => x.type === "swap_joker").slice(0, 4)) {
        items.push(h("li", {}, "Swap ", h("strong", {}, shortText(m.card)), ` for the joker in ${m.meld_id} `, play(m, "Do it")));
      }
      for (const m of moves.filter((x) => x.type === "take_from_meld").slice(0, 4)) {
        const taken = m.take[0];
        items.push(h("li", {}, "Take ", h("strong", {}, shortText(taken.card)), ` from ${taken.meld_id} and meld `,
          h("strong", {}, cardsText(m.melds[0].cards.map(codeOf))), " ", play(m, "Do it")));
      }
      const discards = moves.filter((x) => x.type === "discard" && !x.announce).map((x) => x.card);
      if (discards.length) items.push(h("li", {}, "You may discard: ", h("strong", {}, cardsText([...new Set(discards)]))));
      const prepare = (m, label) => h("li", {}, h("strong", {}, label),
        (m.melds || []).map((x) => cardsText(x.cards.map(codeOf))).join(" · ") || "no meld",
        (m.lay_offs || []).length ? `; lay off ${m.lay_offs.map((l) => `${cardsText(l.cards.map(codeOf))} on ${l.meld_id}`).join(", ")}` : "",
        m.card ? `; discard ${shortText(m.card)}` : "", " ",
        h("button", {
          class: "btn small subtle",
          onclick: () => {
            this.clearPlay();
            for (const g of m.melds || []) { this.selectCodes(g.cards.map(codeOf)); this.groups.push([...this.sel]); this.sel.clear(); }
            for (const l of m.lay_offs || []) { this.selectCodes(l.cards.map(codeOf)); this.layoffs.push({ meld_id: l.meld_id, keys: [...this.sel], end: l.end || null }); this.sel.clear(); }
            if (m.card) this.selectCodes([m.card]);
            this.hintOpen = false;
            this.render();
          },
        }, "Prepare it"), " ", play(m, "Do it"));
      for (const m of moves.filter((x) => x.type === "knock").slice(0, 3)) items.push(prepare(m, "Knock: "));
      for (const m of moves.filter((x) => x.type === "lay_out").slice(0, 1)) items.push(prepare(m, "Lay out: "));
      if (moves.some((x) => x.type === "pass")) items.push(h("li", {}, "You may pass ", play({ type: "pass" }, "Pass")));
      const cut = moves.find((x) => x.type === "cut_in");
      if (cut) items.push(h("li", {}, "You may cut in and claim the discard ", play(cut, "Cut in")));
      body = items.length ? h("ul", { class: "hint-list" }, items) : h("p", {}, "No legal move to suggest.");
      if (legal.truncated) body = [body, h("p", { class: "small" }, "(Only the first moves are listed.)")];
    }
    return h("div", { class: "hints", role: "region", "aria-label": "Hints" },
      h("div", { class: "hints-head" }, h("strong", {}, "Hints"),
        h("button", { class: "icon-btn small", "aria-label": "Close hints", onclick: () => { this.hintOpen = false; this.render(); } }, "✕")),
      body);
  }

  /** A gin hand's result (GIN-SCORE): knock, gin, big gin, undercut, tie or a draw. */
  ginResultText(r) {
    const knocker = r.knocker ?? r.went_out;
    const who = knocker === null || knocker === undefined ? "" : this.name(knocker);
    const other = knocker === null || knocker === undefined ? "" : this.name(1 - knocker);
    const dead = r.deadwood || [];
    return {
      knock: `${who} knocked: deadwood ${dead[knocker]} against ${dead[1 - knocker]}.`,
      gin: `${who} went gin.`,
      big_gin: `${who} went big gin.`,
      undercut: `${other} undercut ${who}: deadwood ${dead[1 - knocker]} against ${dead[knocker]}.`,
      tie: `${who} knocked and tied ${other}: nobody scores.`,
      draw: "A draw: nobody scores.",
      wall_draw: "A draw at the wall: nobody scores, the same dealer deals again.",
      bounce_draw: "A draw: both players took the discard and put it back; nobody scores, the same dealer deals again.",
    }[r.result] || `Result: ${String(r.result).replace(/_/g, " ")}.`;
  }

  // ---- modals ----------------------------------------------------------------------------

  renderModal() {
    const m = this.modals[0];
    if (!m) return null;
    const close = () => { this.modals.shift(); this.render(); };
    let content;
    if (m.type === "invite") {
      content = [
        h("h2", { id: "modal-h" }, "Game created"),
        h("p", {}, "Play here, passing the device from player to player, or send each player the link of their seat."),
        this.renderSeatLinks(),
        h("div", { class: "modal-actions" }, h("button", { class: "btn primary", onclick: close }, "Start playing")),
      ];
    } else if (m.type === "pass") {
      const who = this.name(m.seat);
      content = [
        h("h2", { id: "modal-h" }, `${who}'s turn`),
        h("p", {}, `Pass the device to ${who}. No hand is shown until ${who} is ready.`),
        h("div", { class: "modal-actions" },
          h("button", { class: "btn primary", onclick: () => { this.modals.shift(); this.switchSeat(m.seat); } }, `Show ${who}'s hand`),
          h("button", { class: "btn subtle", onclick: () => { this.modals.shift(); this.switchSeat(null); } }, "Watch the table")),
      ];
    } else if (m.type === "confirm") {
      content = [
        h("h2", { id: "modal-h" }, m.title),
        h("p", {}, m.text),
        h("div", { class: "modal-actions" },
          h("button", { class: "btn primary", onclick: () => { this.modals.shift(); m.onYes(); } }, m.yes),
          h("button", { class: "btn subtle", onclick: close }, "Keep playing")),
      ];
    } else if (m.type === "hand") {
      const r = m.result;
      const v = this.view;
      const out = r.went_out ?? null;
      const flags = handFlags(r);
      const dead = Array.isArray(r.deadwood) ? r.deadwood : null;
      content = [
        h("h2", { id: "modal-h" }, `Hand ${r.hand_number} is over`),
        h("p", { class: "hand-result" }, r.result ? this.ginResultText(r)
          : out === null ? "Nobody went out: the stock ran out." : `${this.name(out)} went out${flags.length ? ` (${flags.join(", ")})` : ""}.`),
        h("table", { class: "mini-scores" },
          h("thead", {}, h("tr", {}, h("th", {}, ""), dead ? h("th", { scope: "col" }, "Deadwood") : null,
            h("th", { scope: "col" }, "This hand"), h("th", { scope: "col" }, "Total"))),
          h("tbody", {}, v.seats.map((s, i) => h("tr", {},
            h("th", { scope: "row" }, s.name), dead ? h("td", {}, fmt(dead[i])) : null,
            h("td", {}, fmt(r.scores[i])), h("td", {}, fmt(s.total)))))),
        m.finished ? h("p", { class: "result" }, this.resultText()) : null,
        h("div", { class: "modal-actions" },
          h("button", { class: "btn primary", onclick: close }, m.finished ? "See the table" : "Next hand")),
      ];
    }
    return h("div", { class: "overlay" },
      h("div", { class: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "modal-h" }, content));
  }
}

// ---- text helpers -------------------------------------------------------------------------

export function humanize(name) {
  const text = name.replace(/_/g, " ");
  return text[0].toUpperCase() + text.slice(1);
}

export function valueText(value) {
  if (value === null) return "no limit";
  if (value === true) return "yes";
  if (value === false) return "no";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value).replace(/_/g, " ");
}

export function matchEndText(end) {
  if (!end || typeof end !== "object") return "";
  if ("target" in end) return `to ${end.target} points`;
  if ("deals" in end) return end.deals === 1 ? "one deal" : `${end.deals} deals`;
  if ("eliminate_at" in end) return `out at ${end.eliminate_at} points`;
  if ("contracts" in end) return `${end.contracts} contracts`;
  return valueText(end);
}

function handFlags(r) {
  const flags = [];
  if (r.going_rummy) flags.push("went rummy");
  if (r.all_at_once) flags.push("all at once");
  if (r.dry) flags.push("dry");
  if (r.reason === "stock_exhausted") flags.push("stock ran out");
  if (r.result) flags.push(r.result.replace(/_/g, " "));
  return flags;
}

/** "Bo: 0:25 left", "Bo's time is up". */
function clockText(left, who) {
  if (left <= 0) return `⏱ ${who}'s time is up`;
  const secs = Math.ceil(left / 1000);
  const text = secs >= 3600 ? `${Math.floor(secs / 3600)}:${String(Math.floor(secs / 60) % 60).padStart(2, "0")}:${String(secs % 60).padStart(2, "0")}`
    : `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, "0")}`;
  return `⏱ ${who}: ${text} left`;
}

function fmt(n) {
  return typeof n === "number" ? String(Math.round(n * 100) / 100) : String(n ?? "");
}
