// The web table's entry point: routes on the URL's hash.
//   #                          the lobby (new game, saved games, join)
//   #new                       the lobby, scrolled to the new-game form
//   #game=<id>&token=<token>   a seat's link: keep the token on this device, open the seat
//   #game=<id>&seat=<n>        a seat whose token this device holds (hot-seat)
//   #game=<id>&seat=watch      the public table
//   #game=<id>                 the last seat used here, else the public table
//   #sheet, #sheet=<id>        a score sheet for a paper game (sheet.js)
//   #join=<code>, ?join=<code> join a game with open seats by its code (join.js)

import * as api from "./api.js";
import { Joiner } from "./join.js";
import { Lobby } from "./lobby.js";
import { ScoreSheet } from "./sheet.js";
import * as store from "./storage.js";
import { Table } from "./table.js";

const root = document.getElementById("app");
let screen = null;
let variants = [];
let variantsProblem = null;

function params() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

function go(hash) {
  if (location.hash === hash || (hash === "#" && !location.hash)) route();
  else location.hash = hash;
}

async function loadVariants() {
  try {
    variants = (await api.getVariants()).variants;
    variantsProblem = null;
  } catch (err) {
    variantsProblem = err.problem || { detail: String(err) };
  }
}

function show(next) {
  if (screen) screen.stop();
  screen = next;
  window.scrollTo(0, 0);
  screen.start();
}

async function route() {
  const query = new URLSearchParams(location.search).get("join");
  if (query) history.replaceState(null, "", `/play#join=${encodeURIComponent(query)}`);
  const p = params();
  if (p.has("join")) {
    if (!variants.length) await loadVariants();
    show(new Joiner(root, { code: p.get("join"), variants, go }));
    document.title = "Join a game";
    return;
  }
  if (p.has("sheet")) {
    if (!variants.length) await loadVariants();
    show(new ScoreSheet(root, { variants, go, sheetId: p.get("sheet") || null }));
    document.title = "Score sheet";
    return;
  }
  const gameId = p.get("game");
  if (!gameId) {
    if (!variants.length) await loadVariants();
    show(new Lobby(root, { variants, go, problem: variantsProblem }));
    document.title = "Rummy table";
    if (location.hash === "#new") document.getElementById("create-h")?.scrollIntoView();
    return;
  }
  let seat = p.get("seat");
  const token = p.get("token");
  if (token) {
    // A seat's link: ask the referee which seat the token is, keep it, drop it from the URL.
    try {
      const me = await api.getMe(gameId, token);
      store.saveGame(gameId, {
        variant: me.variant, names: me.seats.map((s) => s.name),
        tokens: { [me.seat]: token }, seat: me.seat,
      });
      seat = String(me.seat);
      history.replaceState(null, "", `#game=${encodeURIComponent(gameId)}&seat=${seat}`);
    } catch (err) {
      history.replaceState(null, "", `#game=${encodeURIComponent(gameId)}&seat=watch`);
      seat = "watch";
      alertLater(err);
    }
  }
  const saved = store.game(gameId);
  if (seat === null) seat = saved && saved.seat !== null && saved.seat !== undefined ? String(saved.seat) : "watch";
  if (!saved) store.saveGame(gameId, {});
  if (!variants.length) loadVariants().then(() => { if (screen instanceof Table) { screen.variants = byId(); screen.render(); } });
  const table = new Table(root, {
    gameId, seat: seat === "watch" ? null : Number(seat), variants: byId(), go,
    justCreated: p.get("new") === "1",
  });
  if (p.get("new") === "1") history.replaceState(null, "", `#game=${encodeURIComponent(gameId)}&seat=${seat}`);
  document.title = "Rummy table — game " + gameId;
  show(table);
  if (pendingProblem) {
    table.problem = pendingProblem;
    pendingProblem = null;
    table.render();
  }
}

let pendingProblem = null;
function alertLater(err) {
  pendingProblem = {
    title: "This seat link did not work",
    detail: `${err.problem?.detail || err.message} You are watching the public table.`,
    status: err.status,
  };
}

function byId() {
  return Object.fromEntries(variants.map((v) => [v.id, v]));
}

window.addEventListener("hashchange", route);
route();
