// A tiny element builder: h("button", {class: "x", onclick: fn, "aria-label": "…"}, "text").

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (name === "text") {
      el.textContent = value;
    } else if (name === "value") {
      el.value = value;
    } else if (name === "checked" || name === "disabled" || name === "selected") {
      el[name] = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace root's content, keeping the focused control (by data-fkey) focused. */
export function replaceKeepingFocus(root, nodes) {
  const active = document.activeElement;
  const fkey = active && root.contains(active) ? active.dataset.fkey : null;
  root.replaceChildren(...nodes);
  if (fkey) {
    const again = root.querySelector(`[data-fkey="${CSS.escape(fkey)}"]`);
    if (again && !again.disabled) again.focus({ preventScroll: true });
  }
}

/** "Ana", "Ana and Bo", "Ana, Bo and Cy". */
export function listText(items) {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
