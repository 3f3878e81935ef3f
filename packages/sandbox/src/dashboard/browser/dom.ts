/** A child of `h()`: strings and numbers become text nodes, never markup; empty values are skipped. */
export type Child = Node | string | number | null | undefined | false;

/** Attributes of `h()`: `class`, `data-*`, `aria-*` and the like, always set as plain values. */
export type Attrs = Record<string, string | number | boolean | undefined>;

/**
 * Creates an element. Every string given (a user id, a trait, an error message) is inserted as a
 * text node or as an attribute value, so nothing a client supplied is ever parsed as HTML.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/** Appends children to a node (text for strings and numbers). */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/**
 * Replaces the content of `target`, keeping the keyboard focus: the element focused before (found
 * again by its `data-key`) is focused again after, so a refresh never throws the user out.
 */
export function replaceKeepingFocus(target: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const key = active instanceof HTMLElement && target.contains(active) ? active.dataset['key'] : '';
  target.replaceChildren();
  append(target, children);
  if (key === undefined || key === '') return;
  for (const candidate of target.querySelectorAll<HTMLElement>('[data-key]')) {
    if (candidate.dataset['key'] === key) {
      candidate.focus();
      return;
    }
  }
}
