// The referee's public HTTP API (/v1/...): JSON in, JSON or problem+json out.

/** A refused or failed request: `problem` is the problem+json body (or one made up). */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

/** A random key for Idempotency-Key (crypto.randomUUID needs a secure context; this not). */
export function randomKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function once(path, { method = "GET", token = null, body = undefined, headers = {} }) {
  const init = { method, headers: { Accept: "application/json", ...headers }, cache: "no-store" };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, {
      title: "No connection",
      detail: "The referee could not be reached. Check the connection and try again.",
      network: true,
    });
  }
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!resp.ok) {
    const problem = data && typeof data === "object" ? data
      : { title: resp.statusText || "Error", status: resp.status, detail: text.slice(0, 300) };
    problem.retryAfter = Number(resp.headers.get("Retry-After")) || 0;
    throw new ApiError(resp.status, problem);
  }
  return data;
}

/**
 * One API call. Moves carry an Idempotency-Key, so a move whose answer was lost (no
 * connection, 503) is retried with the same key: the referee applies it at most once.
 */
export async function api(path, options = {}) {
  const retries = options.retries ?? (options.method && options.method !== "GET" ? 2 : 0);
  for (let attempt = 0; ; attempt++) {
    try {
      return await once(path, options);
    } catch (err) {
      // no answer, store unavailable, rate limited: try again (a move with the same key)
      const transient = err instanceof ApiError && [0, 429, 503].includes(err.status);
      if (!transient || attempt >= retries) throw err;
      await sleep(Math.min(4000, 1000 * (err.problem.retryAfter || attempt + 1)));
    }
  }
}

/** A join code as typed ("k7qp m2xd", "K7QP-M2XD") in the form the referee prints it. */
export function normalCode(text) {
  const letters = String(text || "").replace(/[\s-]+/g, "").toUpperCase();
  return letters.length > 4 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : letters;
}

/** A POST that is safe to retry: one Idempotency-Key for every attempt of it. */
const retrySafe = (path, token, body) => api(path, {
  method: "POST", token, body, headers: { "Idempotency-Key": randomKey() },
});

export const getVariants = () => api("/v1/variants");
export const createGame = (body) => api("/v1/games", { method: "POST", body, retries: 0 });
export const getPublic = (id) => api(`/v1/games/${encodeURIComponent(id)}`);
export const getMe = (id, token) => api(`/v1/games/${encodeURIComponent(id)}/me`, { token });
export const getLegal = (id, token) =>
  api(`/v1/games/${encodeURIComponent(id)}/legal-moves?limit=300`, { token });
export const getEvents = (id, after, token = null) =>
  api(`/v1/games/${encodeURIComponent(id)}/events?after=${after}`, { token });

/** Propose a move on the version the player saw (If-Match): a stale view gets a 412. */
export const postMove = (id, token, move, version) => {
  const headers = { "Idempotency-Key": randomKey() };
  if (version !== undefined && version !== null) headers["If-Match"] = `"${version}"`;
  return api(`/v1/games/${encodeURIComponent(id)}/moves`, {
    method: "POST", token, body: move, headers,
  });
};

// ---- the lobby: join codes, the host token, rematches -------------------------------------

export const previewJoin = (code) => api(`/v1/join/${encodeURIComponent(normalCode(code))}`);
export const joinGame = (code, name, seat = null) => retrySafe("/v1/join", null,
  seat === null ? { code: normalCode(code), name } : { code: normalCode(code), name, seat });
export const cancelGame = (id, hostToken) =>
  api(`/v1/games/${encodeURIComponent(id)}`, { method: "DELETE", token: hostToken, retries: 0 });
export const rematch = (id, token) =>
  retrySafe(`/v1/games/${encodeURIComponent(id)}/rematch`, token, undefined);

// ---- keeping the table current ---------------------------------------------------------------

/** The URL of a game's event stream after version `after`. With a seat's token it is the
 * seat's own stream, opened with a one-use stream ticket: EventSource cannot send an
 * Authorization header, and a token must never go into a URL. */
export async function eventStreamUrl(id, after, token = null) {
  const url = `/v1/games/${encodeURIComponent(id)}/events?after=${after}`;
  if (!token) return url;
  const { ticket } = await api(`/v1/games/${encodeURIComponent(id)}/stream-tickets`,
    { method: "POST", token, retries: 0 });
  return `${url}&ticket=${encodeURIComponent(ticket)}`;
}
