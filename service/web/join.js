// Joining a game with open seats by its code (/play#join=CODE): the preview the referee
// gives (GET /v1/join/{code}: variant, who sits where, an arranged deal), a name, the seat.
// The seat's own token is kept on this device; no other seat's token ever comes here.

import * as api from "./api.js";
import { h, listText } from "./dom.js";
import * as store from "./storage.js";
import { matchEndText } from "./table.js";

export class Joiner {
  constructor(root, { code, variants, go }) {
    this.root = root;
    this.code = api.normalCode(code);
    this.variants = variants;
    this.go = go;
    this.preview = null;
    this.problem = null;
    this.busy = false;
    this.stopped = false;
  }

  async start() {
    this.render();
    await this.look();
  }

  stop() {
    this.stopped = true;
  }

  async look() {
    this.preview = null;
    this.problem = null;
    this.busy = true;
    this.render();
    try {
      this.preview = await api.previewJoin(this.code);
    } catch (err) {
      this.problem = explain(err);
    }
    this.busy = false;
    if (!this.stopped) this.render();
  }

  async join(name, seat) {
    if (this.busy) return;
    if (!name.trim()) {
      this.problem = { title: "Your name, please", detail: "Type the name the other players will see." };
      this.render();
      return;
    }
    this.busy = true;
    this.problem = null;
    this.render();
    try {
      const joined = await api.joinGame(this.code, name.trim(), seat);
      store.setPref("name", name.trim());
      store.saveGame(joined.game_id, {
        variant: joined.game.variant, names: joined.game.seats.map((s) => s.name),
        tokens: { [joined.seat]: joined.token }, seat: joined.seat,
      });
      this.busy = false;
      this.go(`#game=${encodeURIComponent(joined.game_id)}&seat=${joined.seat}`);
    } catch (err) {
      this.busy = false;
      this.problem = explain(err);
      if (err.status === 409) await this.look();
      else this.render();
    }
  }

  render() {
    if (this.stopped) return;
    const page = h("div", { class: "lobby-page" },
      h("header", { class: "topbar" },
        h("div", { class: "topbar-row" },
          h("a", { class: "icon-btn", href: "#", "aria-label": "All games", title: "All games" }, "‹"),
          h("div", { class: "title" }, h("h1", {}, "Join a game"), h("p", { class: "sub" }, `Code ${this.code}`)))),
      h("main", { class: "lobby-main", id: "main", tabindex: "-1" },
        h("section", { class: "card-panel", "aria-labelledby": "joining-h" }, this.renderBody())));
    this.root.replaceChildren(page);
  }

  renderBody() {
    const p = this.preview;
    const problem = this.problem ? h("div", { class: "problem", role: "alert" },
      h("div", { class: "problem-head" }, h("strong", {}, this.problem.title),
        this.problem.code ? h("code", { class: "chip code" }, this.problem.code) : null),
      h("p", {}, this.problem.detail)) : null;
    if (!p) {
      return [h("h2", { id: "joining-h" }, this.busy ? "Looking up the code…" : "This code did not work"), problem,
        this.busy ? null : this.renderRetype()];
    }
    const game = p.game;
    const mine = store.game(p.game_id);
    const heldSeat = mine && Object.keys(mine.tokens || {}).length ? Object.keys(mine.tokens)[0] : null;
    const variant = this.variants.find((v) => v.id === game.variant)?.name || game.variant;
    const open = game.seats.filter((s) => s.open);
    const named = game.seats.filter((s) => !s.open).map((s) => s.name);
    const nameInput = h("input", {
      type: "text", id: "join-name", maxlength: 40, autocomplete: "nickname", value: store.prefs().name || "",
      required: true,
    });
    const seatSelect = open.length > 1 ? h("select", { id: "join-seat" },
      h("option", { value: "" }, "Any open seat"),
      open.map((s) => h("option", { value: String(s.seat) }, `Seat ${s.seat + 1}`))) : null;
    return [
      h("h2", { id: "joining-h" }, `${variant} with ${listText(named) || "nobody yet"}`),
      h("ul", { class: "preview-facts" },
        h("li", {}, `${game.seats.length} seats, ${open.length} open`),
        game.rules?.match_end ? h("li", {}, `Played ${matchEndText(game.rules.match_end)}`) : null,
        game.rules?.clock ? h("li", {}, `Turn clock: ${game.rules.clock.turn_seconds} s a turn`) : null),
      game.arranged ? h("p", { class: "warning", role: "note" },
        "This game's cards were arranged by its creator, who may know every hand.") : null,
      h("ol", { class: "waiting-seats" }, game.seats.map((s) => h("li", { class: s.open ? "open" : null },
        s.open ? h("span", { class: "muted" }, "Open seat") : h("strong", {}, s.name)))),
      heldSeat !== null ? h("p", {}, "This device has a seat in this game already. ",
        h("a", { class: "btn small", href: `#game=${encodeURIComponent(p.game_id)}&seat=${heldSeat}` }, "Open my seat")) : null,
      problem,
      h("form", {
        class: "join", id: "join-form",
        onsubmit: (e) => {
          e.preventDefault();
          const seat = seatSelect && seatSelect.value !== "" ? Number(seatSelect.value) : null;
          this.join(nameInput.value, seat);
        },
      },
      h("div", { class: "field" }, h("label", { for: "join-name" }, "Your name"), nameInput),
      seatSelect ? h("div", { class: "field" }, h("label", { for: "join-seat" }, "Seat"), seatSelect) : null,
      h("button", { type: "submit", class: "btn primary wide", disabled: this.busy }, this.busy ? "Joining…" : "Join the game")),
    ];
  }

  renderRetype() {
    const input = h("input", { type: "text", id: "join-retype", value: this.code, autocapitalize: "characters", autocomplete: "off", spellcheck: "false" });
    return h("form", {
      class: "join", onsubmit: (e) => {
        e.preventDefault();
        this.code = api.normalCode(input.value);
        history.replaceState(null, "", `#join=${encodeURIComponent(this.code)}`);
        this.look();
      },
    }, h("label", { for: "join-retype" }, "Check the code and try again"),
    h("div", { class: "row" }, input, h("button", { class: "btn", type: "submit" }, "Look it up")));
  }
}

function explain(err) {
  const p = err.problem || {};
  if (err.status === 404) return { title: "No game has this code", detail: "Check the letters: codes are 8 letters and digits, like K7QP-M2XD.", code: p.code };
  if (err.status === 409) return { title: "No seat to take", detail: p.detail || "The game has started or every seat is taken.", code: p.code };
  if (err.status === 429) return { title: "Too many tries", detail: p.detail || "Wait a while, then try again.", code: p.code };
  return { title: p.title || "Could not join", detail: p.detail || err.message, code: p.code };
}
