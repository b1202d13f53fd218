// Card codes (rank A 2-9 T J Q K + suit S H D C, JK for a joker) as readable faces.

export const SUITS = {
  S: { symbol: "♠", name: "spades", red: false },
  H: { symbol: "♥", name: "hearts", red: true },
  D: { symbol: "♦", name: "diamonds", red: true },
  C: { symbol: "♣", name: "clubs", red: false },
};
export const RANKS = "A23456789TJQK";
const RANK_NAMES = {
  A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
  8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
};
export const JOKER = "JK";

/** "QH" -> {rank: "Q", suit: "H"}; "10H" is read as "TH"; the joker has no suit. */
export function parse(code) {
  if (code === JOKER) return { code, rank: null, suit: null, joker: true };
  const rank = code.length === 3 ? "T" : code[0];
  const suit = code[code.length - 1];
  return { code: rank + suit, rank, suit, joker: false };
}

export function rankLabel(rank) {
  return rank === "T" ? "10" : rank;
}

/** "Queen of hearts", "Joker". */
export function cardName(code) {
  const c = parse(code);
  if (c.joker) return "Joker";
  const name = RANK_NAMES[c.rank] || c.rank;
  return `${name[0].toUpperCase()}${name.slice(1)} of ${SUITS[c.suit]?.name || c.suit}`;
}

/** "Q♥", "10♠", "Joker". */
export function shortText(code) {
  const c = parse(code);
  if (c.joker) return "Joker";
  return rankLabel(c.rank) + (SUITS[c.suit]?.symbol || c.suit);
}

/** What a wild stands for, as shown in the views: "QH" or "T*" (rank, suit still open). */
export function readingText(as) {
  if (!as) return "";
  if (as.endsWith("*")) return `${rankLabel(as.slice(0, -1))} (any suit)`;
  return shortText(as);
}

export function readingName(as) {
  if (!as) return "";
  if (as.endsWith("*")) {
    const name = RANK_NAMES[as[0]] || as[0];
    return `any ${name}`;
  }
  return cardName(as).toLowerCase();
}

/** Sort a hand: by suit then rank ("suit"), or by rank then suit ("rank"); jokers last. */
export function sortHand(cards, mode = "suit") {
  const suitOrder = "SHCD"; // alternate colours: ♠ ♥ ♣ ♦
  const key = (code) => {
    const c = parse(code);
    if (c.joker) return [9, 99];
    const r = RANKS.indexOf(c.rank);
    const s = suitOrder.indexOf(c.suit);
    return mode === "rank" ? [r, s] : [s, r];
  };
  return [...cards].sort((a, b) => {
    const ka = key(a), kb = key(b);
    return ka[0] - kb[0] || ka[1] - kb[1];
  });
}

/** Keys that tell apart two copies of one card (two-deck games): "7H#0", "7H#1". */
export function keyed(cards) {
  const seen = {};
  return cards.map((code) => {
    const n = seen[code] || 0;
    seen[code] = n + 1;
    return { code, key: `${code}#${n}` };
  });
}

/**
 * A card face element. Options: tag ("span" or "button"), size ("hand", "meld", "pile"),
 * as (what a wild stands for), wild (true when the card is a wild here).
 */
export function cardFace(code, { tag = "span", size = "hand", as = null, wild = false } = {}) {
  const c = parse(code);
  const el = document.createElement(tag);
  el.className = `card card-${size}`;
  el.dataset.code = code;
  if (c.joker) {
    el.classList.add("joker");
  } else {
    el.classList.add(`suit-${c.suit}`, SUITS[c.suit]?.red ? "red" : "black");
  }
  if (wild || c.joker) el.classList.add("wild");
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.setAttribute("aria-hidden", "true");
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.setAttribute("aria-hidden", "true");
  if (c.joker) {
    const r = document.createElement("span");
    r.className = "rank";
    const s = document.createElement("span");
    s.className = "suit";
    if (as) {
      // the corner reads as the card the wild stands for: "6♦", or "10✱" (suit still open)
      const open = as.endsWith("*");
      const asSuit = open ? null : as[as.length - 1];
      r.textContent = rankLabel(as.slice(0, -1));
      s.textContent = open ? "✱" : SUITS[asSuit]?.symbol || asSuit;
      corner.classList.add("as", asSuit && SUITS[asSuit]?.red ? "red" : "black", asSuit ? `suit-${asSuit}` : "open");
    } else {
      r.textContent = "★";
    }
    corner.append(r, s);
    pip.textContent = "★";
    const word = document.createElement("span");
    word.className = "joker-word";
    word.setAttribute("aria-hidden", "true");
    word.textContent = "JOKER";
    el.append(corner, pip, word);
  } else {
    const r = document.createElement("span");
    r.className = "rank";
    r.textContent = rankLabel(c.rank);
    const s = document.createElement("span");
    s.className = "suit";
    s.textContent = SUITS[c.suit]?.symbol || c.suit;
    corner.append(r, s);
    pip.textContent = SUITS[c.suit]?.symbol || c.suit;
    if ("JQK".includes(c.rank)) {
      pip.textContent = c.rank;
      pip.classList.add("face");
      const small = document.createElement("span");
      small.className = "face-suit";
      small.textContent = SUITS[c.suit]?.symbol || "";
      pip.append(small);
    }
    el.append(corner, pip);
    if (as) {
      // a natural wild (a Dummy 2) standing for another card: a tag with the reading
      const reading = document.createElement("span");
      reading.className = "reading";
      reading.setAttribute("aria-hidden", "true");
      reading.textContent = "=" + (as.endsWith("*") ? `${rankLabel(as.slice(0, -1))}✱` : shortText(as));
      el.append(reading);
    }
  }
  let label = cardName(code);
  if (as) {
    el.classList.add("has-reading");
    label += `, standing for ${readingName(as)}`;
  }
  el.setAttribute("aria-label", label);
  if (tag !== "button") el.setAttribute("role", "img");
  el.title = label;
  return el;
}

/** A face-down card (the stock, other players' hands). */
export function cardBack(size = "pile") {
  const el = document.createElement("span");
  el.className = `card card-${size} back`;
  el.setAttribute("aria-hidden", "true");
  return el;
}
