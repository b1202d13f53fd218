// The score sheet for a paper game: people play with real cards, the referee keeps the score.
//   #sheet            start a sheet: the variant and the players' names
//   #sheet=<id>       the sheet: every hand, the totals, the winner; enter the next hand as
//                     the cards each player still holds (typed as people write them:
//                     "10♥ q♠ 7d") or as points
// The sheet's token stays on this device (localStorage), as seat tokens do.

import * as api from "./api.js";
import { h, listText } from "./dom.js";

const SHEETS_KEY = "rummy-referee.sheets.v1";
const NAMES = ["Ana", "Bo", "Cy", "Dee", "Eli", "Fay"];

function tokens() {
  try {
    return JSON.parse(window.localStorage.getItem(SHEETS_KEY) || "{}") || {};
  } catch {
    return {};
  }
}

function keepToken(id, token) {
  try {
    window.localStorage.setItem(SHEETS_KEY, JSON.stringify({ ...tokens(), [id]: token }));
  } catch {
    /* private mode: the sheet can still be read */
  }
}

const path = (id) => `/v1/scoresheets/${encodeURIComponent(id)}`;

/** "AS, 10♥ q♠" → ["AS", "10♥", "q♠"]: the referee reads each code leniently. */
export function cardsOf(text) {
  return text.split(/[\s,;]+/).filter(Boolean);
}

/** "hands.Dee.0" → "Dee's cards", "points.Bo" → "Bo's points". */
function fieldText(field) {
  const [head, name] = String(field).split(".");
  if (head === "hands" && name) return `${name}'s cards`;
  if (head === "points" && name) return `${name}'s points`;
  return { went_out: "Who went out", all_at_once: "All at once", opened: "Who had opened",
    final_discard: "The last discard", completed: "Contracts", players: "Players" }[head] || field;
}

// Short labels of the facts a sheet asks for (the sheet's `facts` give each its question;
// a fact not named here is asked with its question).
const LABELS = {
  all_at_once: "The player who went out put down the whole hand in one turn",
  opened: "Who had opened (put down their first melds)?",
  final_discard: "All at once: the last card they discarded",
  jokers_used: "All at once: jokers they put down",
  completed: "Who laid down their contract this hand?",
};
const PLAYER_LISTS = new Set(["opened", "completed"]);

export class ScoreSheet {
  constructor(root, { variants, go, sheetId = null }) {
    this.root = root;
    this.variants = variants;
    this.go = go;
    this.sheetId = sheetId;
    this.sheet = null;
    this.problem = null;
    this.busy = false; // creating a sheet
    this.mode = "cards";
    this.variantId = "rummy51";
    this.players = NAMES.slice(0, 3);
  }

  start() {
    if (this.sheetId) this.load();
    else this.render();
  }

  stop() {}

  token() {
    return this.sheetId ? tokens()[this.sheetId] || null : null;
  }

  async load() {
    try {
      this.sheet = await api.api(path(this.sheetId));
      this.problem = null;
    } catch (err) {
      this.problem = err.problem;
    }
    this.render();
  }

  /** A change: the sheet it answers, or its problem shown above the button (what was typed
   *  stays, to be corrected). */
  async send(call, button) {
    if (button) button.disabled = true;
    try {
      this.sheet = await call();
      this.problem = null;
      this.render();
      return true;
    } catch (err) {
      this.problem = err.problem;
      const box = this.root.querySelector("#sheet-problem");
      if (box) box.replaceChildren(...[this.renderProblem()].filter(Boolean));
      else this.render();
      return false;
    } finally {
      if (button && button.isConnected) button.disabled = false;
    }
  }

  render() {
    const page = h("div", { class: "lobby-page sheet-page" },
      h("header", { class: "topbar" },
        h("div", { class: "topbar-row" },
          h("a", { class: "btn small subtle", href: "#" }, "← Tables"),
          h("div", { class: "title" },
            h("h1", {}, "Score sheet"),
            h("p", { class: "sub" }, "Play with real cards; the referee keeps the score")))),
      h("main", { class: "lobby-main", id: "main", tabindex: "-1" },
        this.sheetId ? this.renderSheet() : this.renderNew()));
    this.root.replaceChildren(page);
  }

  renderProblem() {
    const p = this.problem;
    if (!p) return null;
    const errors = Array.isArray(p.errors) ? p.errors : [];
    return h("div", { class: "problem", role: "alert" },
      h("div", { class: "problem-head" }, h("strong", {}, p.status === 400 ? "Not added" : p.title || "Refused")),
      errors.length ? h("ul", { class: "reasons" }, errors.map((e) => h("li", {}, fieldText(e.field), ": ", e.message)))
        : p.detail ? h("p", {}, p.detail) : null);
  }

  // -- a new sheet -----------------------------------------------------------------------

  renderNew() {
    const v = this.variants.find((x) => x.id === this.variantId) || this.variants[0];
    const select = h("select", {
      id: "sheet-variant", onchange: (e) => { this.variantId = e.target.value; this.render(); },
    }, this.variants.map((x) => h("option", { value: x.id, selected: v && x.id === v.id }, x.name)));
    const rows = this.players.map((name, i) => h("li", { class: "player-row" },
      h("label", { for: `sheet-player-${i}`, class: "visually-hidden" }, `Player ${i + 1}`),
      h("span", { class: "seat-no", "aria-hidden": "true" }, String(i + 1)),
      h("input", {
        type: "text", id: `sheet-player-${i}`, value: name, maxlength: 40, autocomplete: "off",
        oninput: (e) => { this.players[i] = e.target.value; },
      }),
      this.players.length > 2 ? h("button", {
        type: "button", class: "icon-btn small", "aria-label": `Remove player ${i + 1}`,
        onclick: () => { this.players.splice(i, 1); this.render(); },
      }, "✕") : null));
    const form = h("form", {
      class: "create", id: "sheet-form", novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        const body = { variant: this.variantId, rules: {}, players: this.players.map((p) => p.trim()) };
        this.busy = true;
        this.render();
        try {
          const made = await api.api("/v1/scoresheets", { method: "POST", body, retries: 0 });
          keepToken(made.sheet_id, made.token);
          this.busy = false;
          this.go(`#sheet=${encodeURIComponent(made.sheet_id)}`);
        } catch (err) {
          this.busy = false;
          this.problem = err.problem;
          this.render();
        }
      },
    },
    h("div", { class: "field" }, h("label", { for: "sheet-variant" }, "Variant"), select),
    h("fieldset", {}, h("legend", {}, "Players"), h("ol", { class: "players" }, rows),
      v && this.players.length < v.max_players ? h("button", {
        type: "button", class: "btn small", onclick: () => {
          this.players.push(NAMES.find((n) => !this.players.includes(n)) || `Player ${this.players.length + 1}`);
          this.render();
        },
      }, "+ Add a player") : null),
    this.renderProblem(),
    h("button", { type: "submit", class: "btn primary wide", disabled: this.busy }, "Start the sheet"));
    return h("section", { class: "card-panel", "aria-labelledby": "sheet-new-h" },
      h("h2", { id: "sheet-new-h" }, "New score sheet"), form);
  }

  // -- the sheet -------------------------------------------------------------------------

  renderSheet() {
    const s = this.sheet;
    if (!s) return h("section", { class: "card-panel" }, this.renderProblem() || h("p", {}, "Loading…"));
    const vname = this.variants.find((x) => x.id === s.variant)?.name || s.variant;
    const table = h("table", { class: "sheet-table", id: "sheet-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Hand"),
        s.players.map((p) => h("th", { scope: "col" }, p)))),
      h("tbody", {}, s.hands.map((hand) => h("tr", { class: "sheet-hand" },
        h("th", { scope: "row" }, String(hand.number)),
        s.players.map((p) => h("td", { class: hand.went_out === p ? "went-out" : null },
          String(hand.scores[p] ?? 0),
          hand.completed?.includes(p) ? h("small", {}, " ✓") : null))))),
      h("tfoot", {}, h("tr", { class: "sheet-totals" }, h("th", { scope: "row" }, "Total"),
        s.players.map((p) => h("td", { "data-player": p }, String(s.totals[p]))))));
    const finished = s.status === "finished";
    return [
      h("section", { class: "card-panel", "aria-labelledby": "sheet-h" },
        h("h2", { id: "sheet-h" }, `${vname}: ${listText(s.players)}`),
        h("div", { class: "sheet-scroll" }, table),
        h("p", { class: "sheet-status", id: "sheet-status", role: "status" },
          finished ? `Match over: ${listText(s.winners)} ${s.winners.length > 1 ? "win" : "wins"}!`
            : `${s.hands.length} hand${s.hands.length === 1 ? "" : "s"} played`),
        this.token() && s.hands.length ? h("button", {
          type: "button", class: "btn small", id: "sheet-undo", disabled: this.busy,
          onclick: (e) => this.send(() => api.api(`${path(this.sheetId)}/hands/last`, {
            method: "DELETE", token: this.token(),
            headers: { "Idempotency-Key": api.randomKey(), "If-Match": `"${s.version}"` },
          }), e.target),
        }, "Take back the last hand") : null),
      !finished && this.token() ? this.renderEntry(s) : null,
      !this.token() ? h("p", { class: "card-panel" }, "This device does not hold the sheet's token: you can read it, not change it.") : null,
    ];
  }

  renderEntry(s) {
    const asked = (s.facts || []).filter((f) => f.entered === "any" || this.mode === "cards");
    const active = s.players.filter((p) => !(s.out_of_match || []).includes(p));
    const inputs = {};
    const modeSwitch = h("div", { class: "row", role: "group", "aria-label": "Enter the hand as" },
      ["cards", "points"].map((m) => h("button", {
        type: "button", class: ["btn small", this.mode === m ? "on" : null], "aria-pressed": String(this.mode === m),
        id: `sheet-mode-${m}`, onclick: () => { this.mode = m; this.render(); },
      }, m === "cards" ? "Cards left" : "Points")));
    const wentOut = h("select", { id: "sheet-went-out" },
      h("option", { value: "" }, "Nobody"),
      active.map((p) => h("option", { value: p }, p)));
    const rows = active.map((p, i) => {
      inputs[p] = h("input", {
        type: this.mode === "points" ? "number" : "text", id: `sheet-in-${i}`, "data-player": p,
        inputmode: this.mode === "points" ? "decimal" : "text", autocomplete: "off",
        autocapitalize: "characters", spellcheck: "false",
        placeholder: this.mode === "points" ? "0" : "e.g. 10♥ q♠ 7d (empty: none)",
      });
      return h("div", { class: "field" }, h("label", { for: `sheet-in-${i}` }, p), inputs[p]);
    });
    const checks = (name, label) => h("fieldset", { id: `sheet-${name}` }, h("legend", {}, label),
      active.map((p) => h("label", { class: "check" },
        h("input", { type: "checkbox", name, value: p }), ` ${p}`)));
    const extra = asked.map((fact) => {
      const id = `sheet-fact-${fact.field}`;
      const label = LABELS[fact.field] || fact.question;
      if (PLAYER_LISTS.has(fact.field)) {
        return h("fieldset", { id, title: fact.question }, h("legend", {}, label),
          active.map((p) => h("label", { class: "check" },
            h("input", { type: "checkbox", name: fact.field, value: p }), ` ${p}`)));
      }
      if (fact.field === "all_at_once") {
        return h("label", { class: "check", title: fact.question },
          h("input", { type: "checkbox", id }), ` ${label}`);
      }
      const number = fact.field === "jokers_used";
      return h("div", { class: "field" }, h("label", { for: id, title: fact.question }, label),
        h("input", { type: number ? "number" : "text", id, autocomplete: "off", min: number ? 0 : null }));
    });
    /** What the form says of each fact asked (undefined: not given). */
    const given = (f, fact) => {
      if (PLAYER_LISTS.has(fact.field)) {
        return [...f.querySelectorAll(`input[name="${fact.field}"]:checked`)].map((x) => x.value);
      }
      const input = f.querySelector(`#sheet-fact-${fact.field}`);
      if (fact.field === "all_at_once") return input.checked;
      const text = input.value.trim();
      if (!text) return undefined;
      return fact.field === "jokers_used" ? Number(text) : text;
    };
    const form = h("form", {
      class: "create", id: "sheet-entry", novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        const f = e.target;
        const body = {};
        const out = wentOut.value || null;
        if (this.mode === "points") {
          body.points = Object.fromEntries(active.map((p) => [p, Number(inputs[p].value || 0)]));
          if (out) body.went_out = out;
        } else {
          body.went_out = out;
          body.hands = Object.fromEntries(active.map((p) => [p, cardsOf(inputs[p].value)]));
        }
        for (const fact of asked) {
          const value = given(f, fact);
          // who went out answers the questions about their finish; nobody out, none asked
          if (value === undefined || (!out && ["all_at_once", "final_discard", "jokers_used"].includes(fact.field))) continue;
          if (fact.field === "jokers_used" && !body.all_at_once) continue;
          body[fact.field] = value;
        }
        await this.send(() => api.api(`${path(this.sheetId)}/hands`, {
          method: "POST", token: this.token(), body,
          headers: { "Idempotency-Key": api.randomKey(), "If-Match": `"${s.version}"` },
        }), f.querySelector("#sheet-add"));
      },
    },
    modeSwitch,
    h("div", { class: "field" }, h("label", { for: "sheet-went-out" }, "Who went out?"), wentOut),
    rows, extra, h("div", { id: "sheet-problem" }, this.renderProblem()),
    h("button", { type: "submit", class: "btn primary wide", id: "sheet-add" }, "Add the hand"));
    return h("section", { class: "card-panel", "aria-labelledby": "sheet-entry-h" },
      h("h2", { id: "sheet-entry-h" }, `Hand ${s.hands.length + 1}`), form);
  }
}
