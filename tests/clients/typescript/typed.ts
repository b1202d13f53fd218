// Compile-time checks of the client generated from openapi/openapi.json: tsc --strict
// must accept this file, so every `@ts-expect-error` below is an error the types catch.
import createClient from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

type Move = components["schemas"]["Move"];
type Problem = components["schemas"]["Problem"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:1" });

export const draw: Move = { type: "draw", source: "stock" };
export const discard: Move = { type: "discard", card: "KC" };
// @ts-expect-error: no such move type
export const typo: Move = { type: "discrad", card: "KC" };
// @ts-expect-error: a draw comes from the stock or the discard pile
export const nowhere: Move = { type: "draw", source: "hand" };

// a refusal's extension members are typed, and more may come
export const stale: Problem = {
  type: "about:blank", title: "Precondition Failed", status: 412,
  detail: "the game is at version 8", current_version: 8,
};
export const extra: Problem = { ...stale, anything: "kept" };

// the operations have the names a client library gives them
export type Calls = [operations["createGame"], operations["getGame"],
  operations["getSeatView"], operations["postMove"], operations["listLegalMoves"],
  operations["listEvents"], operations["checkMeld"], operations["scoreHand"],
  operations["listVariants"], operations["joinGame"]];

export async function wrongPath(): Promise<void> {
  // @ts-expect-error: a move needs the game's id in its path
  await client.POST("/v1/games/{game_id}/moves", { body: draw });
  // @ts-expect-error: a game needs its players
  await client.POST("/v1/games", { body: { variant: "basic" } });
}
