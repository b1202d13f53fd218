// What this device remembers: the games it joined, each seat token it holds, preferences.
// Kept in localStorage when available, else in memory for this page only.

const GAMES_KEY = "rummy-referee.games.v1";
const PREFS_KEY = "rummy-referee.prefs.v1";
const memory = {};

function read(key, fallback) {
  try {
    const raw = window.localStorage.getItem(key);
    return raw ? JSON.parse(raw) : fallback;
  } catch {
    return memory[key] ?? fallback;
  }
}

function write(key, value) {
  memory[key] = value;
  try {
    window.localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* private mode or full: memory only */
  }
}

/** {game_id: {id, variant, names, tokens: {seat: token}, seat, updated}} */
export function games() {
  const all = read(GAMES_KEY, {});
  return all && typeof all === "object" ? all : {};
}

export function game(id) {
  return games()[id] || null;
}

export function saveGame(id, patch) {
  const all = games();
  const old = all[id] || { id, tokens: {}, names: [], variant: null, seat: null };
  const merged = { ...old, ...patch, tokens: { ...old.tokens, ...(patch.tokens || {}) } };
  merged.updated = Date.now();
  all[id] = merged;
  write(GAMES_KEY, all);
  return merged;
}

export function setToken(id, seat, token) {
  return saveGame(id, { tokens: { [seat]: token } });
}

export function forgetGame(id) {
  const all = games();
  delete all[id];
  write(GAMES_KEY, all);
}

const DEFAULT_PREFS = { sort: "suit", follow: true, fourColour: false, hints: true };

export function prefs() {
  return { ...DEFAULT_PREFS, ...read(PREFS_KEY, {}) };
}

export function setPref(name, value) {
  write(PREFS_KEY, { ...prefs(), [name]: value });
}
