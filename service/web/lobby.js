// The lobby: create a game (the form is built from GET /v1/variants; seats named or left
// open for players who join with the code), reopen a saved one, join with a code or link.

import * as api from "./api.js";
import { h } from "./dom.js";
import * as store from "./storage.js";
import { humanize, matchEndText, valueText } from "./table.js";

const NAMES = ["Ana", "Bo", "Cy", "Dee", "Eli", "Fay"];
const MATCH_END_PRESETS = { target: 150, deals: 3, eliminate_at: 101, contracts: 12 };

export class Lobby {
  constructor(root, { variants, go, problem = null }) {
    this.root = root;
    this.variants = variants; // [] until loaded
    this.go = go;
    this.problem = problem;
    this.variantId = store.prefs().variant || "basic";
    this.players = [store.prefs().name || NAMES[0], NAMES[1]];
    this.open = [false, false]; // open seats: taken by whoever joins with the code
    this.busy = false;
  }

  start() {
    this.render();
  }

  stop() {}

  variant() {
    return this.variants.find((v) => v.id === this.variantId) || this.variants[0];
  }

  render() {
    const saved = Object.values(store.games()).sort((a, b) => (b.updated || 0) - (a.updated || 0));
    const page = h("div", { class: "lobby-page" },
      h("header", { class: "topbar" },
        h("div", { class: "topbar-row" },
          h("span", { class: "logo", "aria-hidden": "true" }, "♠", h("span", { class: "red" }, "♥")),
          h("div", { class: "title" },
            h("h1", {}, "Rummy table"),
            h("p", { class: "sub" }, "Every move judged by the referee")))),
      h("main", { class: "lobby-main", id: "main", tabindex: "-1" },
        saved.length ? this.renderSaved(saved) : null,
        this.renderCreate(),
        this.renderJoin(),
        h("section", { class: "card-panel", "aria-labelledby": "paper-h" },
          h("h2", { id: "paper-h" }, "Playing with real cards?"),
          h("a", { class: "btn wide", href: "#sheet", id: "sheet-link" }, "Keep the score on a score sheet"))));
    this.root.replaceChildren(page);
  }

  renderSaved(saved) {
    return h("section", { class: "card-panel", "aria-labelledby": "saved-h" },
      h("h2", { id: "saved-h" }, "Your games"),
      h("ul", { class: "saved" }, saved.map((g) => {
        const seats = Object.keys(g.tokens || {}).map(Number).sort((a, b) => a - b);
        const names = (g.names || []).map((n, i) => n || `seat ${i + 1}`);
        const held = seats.map((s) => names[s] || `seat ${s + 1}`).join(", ");
        const vname = this.variants.find((v) => v.id === g.variant)?.name || g.variant || "Game";
        return h("li", { class: "saved-game" },
          h("div", {},
            h("strong", {}, vname), " · ", names.join(", "),
            h("small", {}, seats.length ? `You hold: ${held}` : "Watching", " · ", g.id)),
          h("div", { class: "saved-actions" },
            h("a", { class: "btn small primary", href: `#game=${encodeURIComponent(g.id)}` }, "Open"),
            h("button", {
              class: "btn small subtle", "aria-label": `Forget the game ${g.id}`,
              onclick: () => { store.forgetGame(g.id); this.render(); },
            }, "Forget")));
      })));
  }

  renderJoin() {
    const input = h("input", {
      type: "text", id: "join-link", placeholder: "K7QP-M2XD or https://…/play#…", autocomplete: "off",
      autocapitalize: "characters", spellcheck: "false",
    });
    return h("section", { class: "card-panel", "aria-labelledby": "join-h" },
      h("h2", { id: "join-h" }, "Join a game"),
      h("form", {
        class: "join", onsubmit: (e) => {
          e.preventDefault();
          const hash = joinTarget(input.value);
          if (hash) this.go(hash);
        },
      },
      h("label", { for: "join-link" }, "Type the join code, or paste the link you were sent (a game id opens it to watch)"),
      h("div", { class: "row" }, input, h("button", { class: "btn", type: "submit", id: "join-open" }, "Open"))));
  }

  renderCreate() {
    if (!this.variants.length) {
      return h("section", { class: "card-panel" }, h("h2", {}, "New game"),
        this.problem ? h("p", { class: "problem", role: "alert" }, this.problem.detail || "Could not load the variants.")
          : h("p", {}, "Loading the variants…"));
    }
    const v = this.variant();
    const form = h("form", { class: "create", id: "create-form", novalidate: true, onsubmit: (e) => this.submit(e) });
    const variantSelect = h("select", {
      id: "variant", name: "variant",
      onchange: (e) => {
        this.variantId = e.target.value;
        store.setPref("variant", this.variantId);
        const max = this.variant().max_players;
        this.players = this.players.slice(0, max);
        this.open = this.open.slice(0, max);
        this.render();
      },
    }, this.variants.map((x) => h("option", { value: x.id, selected: x.id === v.id }, x.name)));
    this.playersBox = h("div", {});
    this.dealerSelect = h("select", { id: "dealer", name: "dealer" });
    this.fillPlayers();
    form.append(...[
      h("div", { class: "field" }, h("label", { for: "variant" }, "Variant"), variantSelect,
        h("small", {}, `${v.min_players}–${v.max_players} players · ${v.deck_size} cards`)),
      h("fieldset", {}, h("legend", {}, "Players"),
        h("small", { class: "fieldset-help" }, "Player 1 is you. Tick “open” for a seat that a player takes from their own device with the join code."),
        this.playersBox),
      h("div", { class: "field" }, h("label", { for: "dealer" }, "First dealer"), this.dealerSelect),
      h("details", { class: "knobs" },
        h("summary", {}, "House rules", h("small", {}, ` ${v.knobs.length} knobs, defaults set`)),
        h("div", { class: "knob-list" }, v.knobs.map((k) => this.knobField(k)))),
      h("details", { class: "arranged" },
        h("summary", {}, "Arranged deal (optional)"),
        h("div", { class: "field" },
          h("label", { for: "deals" }, "Deals as JSON: one deal {hands, discard, stock} or a list of them"),
          h("textarea", { id: "deals", name: "deals", rows: 4, spellcheck: "false", placeholder: '{"hands": [[…], […]], "discard": […], "stock": […]}' }))),
      this.problem ? this.renderProblem() : null,
      h("button", { type: "submit", class: "btn primary wide", disabled: this.busy }, this.busy ? "Creating…" : "Create the game"),
    ].filter(Boolean));
    return h("section", { class: "card-panel", "aria-labelledby": "create-h" },
      h("h2", { id: "create-h" }, "New game"), form);
  }

  /** The players' names and the dealer choice (redrawn alone: the knobs keep their values). */
  fillPlayers(focusLast = false) {
    const v = this.variant();
    const rows = this.players.map((name, i) => h("li", { class: ["player-row", this.open[i] && "open"] },
      h("label", { for: `player-${i}`, class: "visually-hidden" }, `Player ${i + 1}`),
      h("span", { class: "seat-no", "aria-hidden": "true" }, String(i + 1)),
      this.open[i] ? h("input", {
        type: "text", id: `player-${i}`, value: "", placeholder: "Open: joins with the code", disabled: true,
      }) : h("input", {
        type: "text", id: `player-${i}`, name: "player", value: name, maxlength: 40, required: true,
        autocomplete: "off", oninput: (e) => { this.players[i] = e.target.value; this.fillDealer(); },
      }),
      i > 0 ? h("label", { class: "switch inline open-seat" },
        h("input", {
          type: "checkbox", id: `open-${i}`, checked: this.open[i],
          onchange: (e) => { this.open[i] = e.target.checked; this.fillPlayers(); },
        }), h("span", {}, "open", h("span", { class: "visually-hidden" }, ` seat ${i + 1}`))) : null,
      this.players.length > v.min_players ? h("button", {
        type: "button", class: "icon-btn small", "aria-label": `Remove player ${i + 1}`,
        onclick: () => { this.players.splice(i, 1); this.open.splice(i, 1); this.fillPlayers(); },
      }, "✕") : null));
    this.playersBox.replaceChildren(...[
      h("ol", { class: "players" }, rows),
      this.players.length < v.max_players ? h("button", {
        type: "button", class: "btn small", onclick: () => {
          this.players.push(NAMES.find((n) => !this.players.includes(n)) || `Player ${this.players.length + 1}`);
          this.open.push(false);
          this.fillPlayers(true);
        },
      }, "+ Add a player") : null].filter(Boolean));
    this.fillDealer();
    if (focusLast) this.playersBox.querySelector(`#player-${this.players.length - 1}`)?.select();
  }

  fillDealer() {
    const chosen = this.dealerSelect.value;
    this.dealerSelect.replaceChildren(
      h("option", { value: "" }, "Random"),
      ...this.players.map((name, i) => h("option", { value: String(i), selected: String(i) === chosen },
        this.open[i] ? `Seat ${i + 1} (open)` : name || `Player ${i + 1}`)));
  }

  renderProblem() {
    const p = this.problem;
    return h("div", { class: "problem", role: "alert" },
      h("div", { class: "problem-head" }, h("strong", {}, p.title || "Could not create the game")),
      p.detail ? h("p", {}, p.detail) : null,
      Array.isArray(p.errors) ? h("ul", { class: "reasons" }, p.errors.map((e) => h("li", {}, h("code", {}, e.field), ": ", e.message))) : null);
  }

  /** One knob as a form control, named knob-<name>, holding the default. */
  knobField(k) {
    const id = `knob-${k.name}`;
    const help = h("small", {}, k.description, " ", h("span", { class: "rule-id" }, k.rule));
    const label = h("label", { for: id }, humanize(k.name));
    let control;
    if (k.type === "bool") {
      control = h("input", { type: "checkbox", id, name: id, checked: k.default === true, dataset: { knob: k.name, kind: "bool" } });
      return h("div", { class: "field knob switch-field" },
        h("label", { class: "switch" }, control, h("span", {}, humanize(k.name))), help);
    }
    if (k.type === "enum") {
      control = h("select", { id, name: id, dataset: { knob: k.name, kind: "enum" } },
        (k.values || []).map((x) => h("option", { value: x, selected: x === k.default }, valueText(x) + (x === k.default ? " (default)" : ""))));
      return h("div", { class: "field knob" }, label, control, help);
    }
    if (k.type === "int") {
      const number = h("input", {
        type: "number", id, name: id, inputmode: "numeric", min: k.minimum, max: k.maximum,
        value: k.default === null ? "" : k.default, disabled: k.default === null, dataset: { knob: k.name, kind: "int" },
      });
      const none = k.nullable ? h("label", { class: "switch inline" },
        h("input", {
          type: "checkbox", id: `${id}-none`, checked: k.default === null,
          onchange: (e) => { number.disabled = e.target.checked; },
        }), h("span", {}, "no limit")) : null;
      return h("div", { class: "field knob" }, label, h("div", { class: "row" }, number, none), help);
    }
    if (k.type === "int_or_enum") {
      const isNum = typeof k.default === "number";
      const number = h("input", {
        type: "number", id: `${id}-n`, inputmode: "numeric", min: k.minimum, max: k.maximum,
        value: isNum ? k.default : (k.minimum ?? 1), hidden: !isNum, "aria-label": `${humanize(k.name)}: number`,
      });
      control = h("select", {
        id, name: id, dataset: { knob: k.name, kind: "int_or_enum" },
        onchange: (e) => { number.hidden = e.target.value !== "#"; },
      }, (k.values || []).map((x) => h("option", { value: x, selected: x === k.default }, valueText(x))),
      h("option", { value: "#", selected: isNum }, "a number…"));
      return h("div", { class: "field knob" }, label, h("div", { class: "row" }, control, number), help);
    }
    if (k.type === "match_end") {
      const [kind, amount] = Object.entries(k.default || { target: 150 })[0];
      const number = h("input", {
        type: "number", id: `${id}-n`, inputmode: "numeric", min: 1, value: amount,
        "aria-label": `${humanize(k.name)}: number`,
      });
      control = h("select", {
        id, name: id, dataset: { knob: k.name, kind: "match_end" },
        onchange: (e) => { number.value = e.target.value === kind ? amount : MATCH_END_PRESETS[e.target.value] ?? 1; },
      }, (k.values || [kind]).map((x) => h("option", { value: x, selected: x === kind }, matchEndKind(x))));
      return h("div", { class: "field knob" }, label, h("div", { class: "row" }, control, number),
        h("small", {}, `Default: ${matchEndText(k.default)}. `, k.description, " ", h("span", { class: "rule-id" }, k.rule)));
    }
    if (k.type === "clock") {
      const bounds = k.bounds?.turn_seconds || { minimum: 5, maximum: 86400 };
      const seconds = h("input", {
        type: "number", id: `${id}-n`, inputmode: "numeric", min: bounds.minimum, max: bounds.maximum,
        value: k.default?.turn_seconds ?? 60, disabled: !k.default, "aria-label": "Seconds per turn",
      });
      control = h("input", {
        type: "checkbox", id, name: id, checked: Boolean(k.default), dataset: { knob: k.name, kind: "clock" },
        onchange: (e) => { seconds.disabled = !e.target.checked; },
      });
      return h("div", { class: "field knob switch-field" },
        h("div", { class: "row" }, h("label", { class: "switch" }, control, h("span", {}, "Turn clock")),
          seconds, h("span", { class: "small" }, "seconds a turn")),
        help);
    }
    return h("div", { class: "field knob" }, label, h("small", {}, `(${k.type} knobs are not editable here)`));
  }

  /** The knobs that differ from their defaults (the referee fills in the rest). */
  readKnobs(form) {
    const v = this.variant();
    const rules = {};
    for (const k of v.knobs) {
      const el = form.querySelector(`#knob-${CSS.escape(k.name)}`);
      if (!el) continue;
      let value;
      if (k.type === "bool") value = el.checked;
      else if (k.type === "enum") value = el.value;
      else if (k.type === "int") {
        const none = form.querySelector(`#knob-${CSS.escape(k.name)}-none`);
        value = none && none.checked ? null : Number(el.value);
      } else if (k.type === "int_or_enum") {
        value = el.value === "#" ? Number(form.querySelector(`#knob-${CSS.escape(k.name)}-n`).value) : el.value;
      } else if (k.type === "match_end") {
        value = { [el.value]: Number(form.querySelector(`#knob-${CSS.escape(k.name)}-n`).value) };
      } else if (k.type === "clock") {
        value = el.checked ? { turn_seconds: Number(form.querySelector(`#knob-${CSS.escape(k.name)}-n`).value) } : null;
      } else continue;
      if (JSON.stringify(value) !== JSON.stringify(k.default)) rules[k.name] = value;
    }
    return rules;
  }

  async submit(e) {
    e.preventDefault();
    const form = e.target;
    const v = this.variant();
    const players = this.players.map((p, i) => (this.open[i] ? null : p.trim()));
    const body = { variant: v.id, players, rules: this.readKnobs(form) };
    const dealer = this.dealerSelect.value;
    if (dealer !== "") body.dealer = Number(dealer);
    const dealsText = form.querySelector("#deals").value.trim();
    if (dealsText) {
      try {
        const parsed = JSON.parse(dealsText);
        body.deals = Array.isArray(parsed) ? parsed : [parsed];
      } catch (err) {
        this.problem = { title: "The arranged deal is not valid JSON", detail: String(err.message || err) };
        this.render();
        return;
      }
    }
    if (players.some((p) => p === "")) {
      this.problem = { title: "Every player needs a name", detail: "Fill in each name, or remove the empty row." };
      this.render();
      return;
    }
    this.busy = true;
    this.problem = null;
    this.render();
    try {
      const created = await api.createGame(body);
      const tokens = Object.fromEntries(created.seats.map((s) => [s.seat, s.token]));
      const waiting = Boolean(created.join_code);
      // waiting for players: this device is the creator's seat; else the seat to play first
      const first = waiting ? 0 : created.game.turn ? created.game.turn.seat : 0;
      store.saveGame(created.game_id, {
        variant: v.id, names: created.game.seats.map((s) => s.name), tokens, seat: first,
        host: created.host_token, joinCode: created.join_code || null,
      });
      store.setPref("name", players[0]);
      this.busy = false;
      this.go(`#game=${encodeURIComponent(created.game_id)}&seat=${first}${waiting ? "" : "&new=1"}`);
    } catch (err) {
      this.busy = false;
      this.problem = err.problem || { title: "Could not create the game", detail: String(err) };
      this.render();
      this.root.querySelector(".problem")?.scrollIntoView({ block: "center" });
    }
  }
}

/** Where a typed join code, a pasted link or a game id leads (a hash), or null. */
export function joinTarget(text) {
  const typed = String(text || "").trim();
  if (!typed) return null;
  const joined = typed.match(/[#?&]join=([^&#]+)/);
  if (joined) return `#join=${encodeURIComponent(api.normalCode(decodeURIComponent(joined[1])))}`;
  if (typed.includes("#")) return typed.slice(typed.indexOf("#"));
  if (typed.replace(/[\s-]+/g, "").length === 8) return `#join=${encodeURIComponent(api.normalCode(typed))}`;
  return `#game=${encodeURIComponent(typed)}`;
}

function matchEndKind(kind) {
  return {
    target: "first to a target total", deals: "a number of deals",
    eliminate_at: "eliminate at a total", contracts: "a number of contracts",
  }[kind] || valueText(kind);
}
