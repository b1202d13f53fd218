// A short program that plays a one-hand game of basic rummy against the served app with
// the generated types and openapi-fetch: every move chosen from GET …/legal-moves.
// Usage: node build/play.js <base url>; prints a JSON summary.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Move = components["schemas"]["Move"];
type LegalMoves = components["schemas"]["LegalMoves"];

const baseUrl = process.argv[2];
if (!baseUrl) throw new Error("usage: node build/play.js <base url>");

/** fetch, sending a request again after the `Retry-After` of a `429` (a seat's rate limit):
 * what a polite client does. */
let throttled = 0;
async function politeFetch(request: Request): Promise<Response> {
  for (let attempt = 1; ; attempt += 1) {
    const response = await fetch(request.clone());
    if (response.status !== 429 || attempt === 5) return response;
    throttled += 1;
    const seconds = Number(response.headers.get("Retry-After") ?? "1");
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  }
}

const client = createClient<paths>({ baseUrl, fetch: politeFetch });
const PREFERENCE: Record<string, number> = { meld: 0, lay_off: 1, draw: 2, discard: 3 };

function choose(legal: LegalMoves): Move {
  if (legal.compound?.exists && legal.compound.example) return legal.compound.example;
  const playable = legal.moves.filter((m) => m.type in PREFERENCE);
  const rank = (m: Move): number =>
    (PREFERENCE[m.type] ?? 9) * 2 + ("source" in m && m.source === "discard" ? 1 : 0);
  playable.sort((a, b) => rank(a) - rank(b));
  const best = playable[0];
  if (!best) throw new Error(`no move to make: ${JSON.stringify(legal)}`);
  return best;
}

async function main(): Promise<void> {
  const created = await client.POST("/v1/games", {
    body: { variant: "basic", players: ["Ana", "Bo"], rules: { match_end: { deals: 1 } } },
  });
  if (!created.data) throw new Error(`create: ${JSON.stringify(created.error)}`);
  const gameId = created.data.game_id;
  const tokens = created.data.seats.map((s) => s.token);
  let view: components["schemas"]["PublicView"] = created.data.game;
  let moves = 0;
  let refused: string | undefined;
  while (view.status === "playing" && view.turn && moves < 2000) {
    const auth = { Authorization: `Bearer ${tokens[view.turn.seat]}` };
    const legal = await client.GET("/v1/games/{game_id}/legal-moves", {
      params: { path: { game_id: gameId } }, headers: auth,
    });
    if (!legal.data) throw new Error(`legal-moves: ${JSON.stringify(legal.error)}`);
    if (refused === undefined) {  // a move out of turn: a typed problem
      const other = tokens[1 - view.turn.seat];
      const wrong = await client.POST("/v1/games/{game_id}/moves", {
        params: { path: { game_id: gameId } },
        headers: { Authorization: `Bearer ${other}` },
        body: { type: "draw", source: "stock" },
      });
      refused = wrong.error?.code;
    }
    const answer = await client.POST("/v1/games/{game_id}/moves", {
      params: { path: { game_id: gameId } }, headers: auth, body: choose(legal.data),
    });
    if (!answer.data) throw new Error(`move: ${JSON.stringify(answer.error)}`);
    view = answer.data.game;
    moves += 1;
  }
  const final = await client.GET("/v1/games/{game_id}", {
    params: { path: { game_id: gameId } },
  });
  console.log(JSON.stringify({
    game_id: gameId, moves, refused, throttled, status: final.data?.status,
    winners: final.data?.winners, hands: final.data?.hands_played.length,
  }));
}

await main();
