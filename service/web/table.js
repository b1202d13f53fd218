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
    this.loading = false;
    this.again = false;
    this.switching = false;
    this.stopped = false;
    this.prefs = store.prefs();
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
    document.addEventListener("visibilitychange", this.onVisible);
  }

  stop() {
    this.stopped = true;
    clearInterval(this.timer);
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
      url = await api.eventStreamUrl(this.gameId, this.view ? this.view.version : 0, this.token);
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
    return s ? s.name : `Seat ${seat + 1}`;
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
    if (this.groups.length) {
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
        v ? [this.renderCentre(), this.renderMelds(), this.renderScores(), this.renderLog()]
          : h("p", { class: "loading" }, "Loading the table…")),
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
      sub.push(`Hand ${v.hand_number}`);
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
      const turn = v.status === "playing" && v.turn && v.turn.seat === s.seat;
      const canSwitch = held.has(s.seat);
      const bits = [`${s.hand_count} card${s.hand_count === 1 ? "" : "s"}`, `${fmt(s.total)} pts`];
      const badges = [];
      if (mine) badges.push(h("span", { class: "badge you" }, "you"));
      if (turn) badges.push(h("span", { class: "badge turn" }, v.turn.phase === "draw" ? "to draw" : "to play"));
      if (s.seat === v.dealer) badges.push(h("span", { class: "badge dealer", title: "dealer" }, v.seats.length > 3 ? "D" : "dealer"));
      if (s.opened) badges.push(h("span", { class: "badge ok" }, "opened"));
      if (s.out_of_match) badges.push(h("span", { class: "badge out" }, "out"));
      const contract = s.contract ? h("span", { class: "contract", title: s.contract.text },
        `Contract ${s.contract.number}${s.contract.down ? " ✓" : ""}`) : null;
      const label = [s.name, mine ? "you" : null, ...bits, turn ? `to ${v.turn.phase}` : null,
        s.seat === v.dealer ? "dealer" : null,
        s.opened ? "opened" : null,
        s.contract ? `contract ${s.contract.number}: ${s.contract.text}${s.contract.down ? ", laid down" : ""}` : null,
        canSwitch && !mine ? "switch to this seat" : null]
        .filter(Boolean).join(", ");
      const body = [
        h("span", { class: "seat-name" }, s.name),
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
    const canAct = this.playPhase() && !v.discard_only && this.sel.size > 0 && !this.busy;
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

  resultText() {
    const v = this.view;
    const winners = (v.winners || []).map((s) => this.name(s));
    if (!winners.length) return "Match over.";
    const you = this.seat !== null && v.winners.includes(this.seat);
    return `Match over — ${listText(winners)} ${winners.length > 1 ? "win" : "wins"}${you ? " (that's you!)" : ""}.`;
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
      } else if (t !== "deal_revealed") {
        parts.push(`${who}: ${t.replace(/_/g, " ")}`);
      }
    }
    return parts.join("; ") || `${who} moved`;
  }

  // ---- the dock: status, hand, actions ---------------------------------------------------

  renderDock() {
    const v = this.view;
    return h("section", { class: "dock", "aria-label": "Your hand and actions" },
      h("p", { class: ["status", this.myTurn() && "my-turn"], role: "status", "aria-live": "polite" }, this.statusText()),
      this.renderProblem(),
      this.toast ? h("p", { class: "toast", role: "status" }, this.toast) : null,
      this.hintOpen ? this.renderHints() : null,
      this.renderTray(),
      this.token && v.status === "playing" ? this.renderHand() : (v.status === "playing" ? h("p", { class: "watching" },
        "You are watching: hands stay hidden. Open a seat's link to play it.") : null),
      h("div", { class: "actions" }, this.renderActions()));
  }

  statusText() {
    const v = this.view;
    if (this.switching) return "Switching seat…";
    if (v.status === "finished") return this.resultText();
    const turn = v.turn;
    const who = this.name(turn.seat);
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
    const selectable = this.playPhase() && !this.busy;
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
    if (v.status === "finished") {
      return [h("button", { class: "btn primary", "data-fkey": "new", onclick: () => this.go("#new") }, "New game")];
    }
    if (!this.token) return [];
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
        h("p", {}, `Pass the device to ${who}. The hand stays hidden until ${who} is ready.`),
        h("div", { class: "modal-actions" },
          h("button", { class: "btn primary", onclick: () => { this.modals.shift(); this.switchSeat(m.seat); } }, `Show ${who}'s hand`),
          h("button", { class: "btn subtle", onclick: close }, `Stay as ${this.name(this.seat)}`)),
      ];
    } else if (m.type === "hand") {
      const r = m.result;
      const v = this.view;
      const out = r.went_out ?? null;
      const flags = handFlags(r);
      content = [
        h("h2", { id: "modal-h" }, `Hand ${r.hand_number} is over`),
        h("p", {}, out === null ? "Nobody went out: the stock ran out." : `${this.name(out)} went out${flags.length ? ` (${flags.join(", ")})` : ""}.`),
        h("table", { class: "mini-scores" },
          h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", { scope: "col" }, "This hand"), h("th", { scope: "col" }, "Total"))),
          h("tbody", {}, v.seats.map((s, i) => h("tr", {},
            h("th", { scope: "row" }, s.name), h("td", {}, fmt(r.scores[i])), h("td", {}, fmt(s.total)))))),
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
  return flags;
}

function fmt(n) {
  return typeof n === "number" ? String(Math.round(n * 100) / 100) : String(n ?? "");
}
