// With Move a oneOf of one schema per move type (discriminated by `type`), a move body
// that mixes the fields of two types does not compile.
import type { components } from "./schema.js";

type Move = components["schemas"]["Move"];

// @ts-expect-error: a discard names its card; `source` belongs to a draw
export const mixed: Move = { type: "discard", source: "stock" };
// @ts-expect-error: a draw says where from
export const incomplete: Move = { type: "draw" };
export const fine: Move = { type: "discard", card: "KC" };
