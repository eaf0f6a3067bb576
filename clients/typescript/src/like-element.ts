import { LikeStore, type LikeState, type LikeStoreOptions } from "./like-store.js";
import type { ItemRef, ItemType } from "./types.js";

const ITEM_TYPES: readonly string[] = ["post", "reel", "comment"];

/*
 * Styles live in the shadow root: nothing leaks into the page. Hosts restyle
 * through the custom properties below or `plaudit-like::part(button|icon|count|message)`.
 */
const STYLE = `
:host{display:inline-flex;align-items:center;gap:.4em;font:inherit;color:inherit}
button{display:inline-flex;align-items:center;gap:.35em;font:inherit;cursor:pointer;
 color:var(--plaudit-color,inherit);background:var(--plaudit-background,transparent);
 border:var(--plaudit-border,1px solid currentColor);border-radius:var(--plaudit-radius,999px);
 padding:var(--plaudit-padding,.25em .75em)}
button[aria-pressed=true]{color:var(--plaudit-liked-color,#d0234b);background:var(--plaudit-liked-background,transparent)}
button:disabled{cursor:default;opacity:var(--plaudit-disabled-opacity,.6)}
button:focus-visible{outline:var(--plaudit-focus-ring,2px solid #2563eb);outline-offset:2px}
:host([pending]) [part=icon]{opacity:.6}
[part=count]:empty{display:none}
[part=message]{font-size:.85em;color:var(--plaudit-error-color,#b91c1c)}
[part=message]:empty{display:none}`;

let defaultStore: LikeStore | undefined;

/** The page's shared store: every `<plaudit-like>` uses it. */
export function plauditStore(): LikeStore {
  defaultStore ??= new LikeStore();
  return defaultStore;
}

/**
 * Tells the page's buttons where the API is and how to get the user's token.
 * Call it before the buttons connect to use another origin; call it again on
 * sign-in or sign-out (the buttons read their state again).
 */
export function configurePlaudit(options: LikeStoreOptions): LikeStore {
  if (!defaultStore) defaultStore = new LikeStore(options);
  else defaultStore.configure(options);
  return defaultStore;
}

const exact = new Intl.NumberFormat();

/**
 * `<plaudit-like item-id="456" item-type="post">`: a like toggle for one item.
 * It reflects its state as `liked`, `pending` and `count` attributes (for
 * styling and scripts) and fires `plaudit-change` when that state changes.
 */
export class PlauditLike extends HTMLElement {
  static observedAttributes = ["item-id", "item-type", "label"];
  readonly #button: HTMLButtonElement;
  readonly #count: HTMLElement;
  readonly #message: HTMLElement;
  #item: ItemRef | null = null;
  #stop: (() => void) | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    const root = this.attachShadow({ mode: "open" });
    root.innerHTML = `<style>${STYLE}</style><button part="button" type="button" aria-pressed="false" disabled><span part="icon" aria-hidden="true">\u2665</span><span part="count"></span></button><span part="message" role="status"></span>`;
    this.#button = root.querySelector("button")!;
    this.#count = root.querySelector("[part=count]")!;
    this.#message = root.querySelector("[part=message]")!;
    this.#button.addEventListener("click", () => this.#item && plauditStore().toggle(this.#item));
  }

  connectedCallback(): void {
    this.#attach();
  }

  disconnectedCallback(): void {
    this.#detach();
  }

  attributeChangedCallback(): void {
    if (this.isConnected) this.#attach();
  }

  #attach(): void {
    this.#detach();
    const id = this.getAttribute("item-id") ?? "";
    const type = this.getAttribute("item-type") ?? "post";
    if (!/^(0|[1-9]\d{0,19})$/.test(id) || !ITEM_TYPES.includes(type)) {
      this.#message.textContent = `plaudit-like: item-id must be a decimal id and item-type one of ${ITEM_TYPES.join(", ")}.`;
      return;
    }
    const item: ItemRef = { item_id: id, item_type: type as ItemType };
    this.#item = item;
    const store = plauditStore();
    this.#stop = store.watch(item, () => this.#render(store.get(item)));
    this.#render(store.get(item));
  }

  #detach(): void {
    this.#stop?.();
    this.#stop = null;
    this.#item = null;
    clearTimeout(this.#timer);
  }

  #render(state: LikeState): void {
    const button = this.#button;
    const what = this.getAttribute("label") ?? `Like this ${this.#item?.item_type ?? "item"}`;
    const blocked = state.blockedUntil > Date.now();
    button.setAttribute("aria-pressed", String(state.liked));
    button.disabled = !state.loaded || !state.canLike || blocked;
    const counted = state.count === null ? "" : `${exact.format(state.count)} ${state.count === 1 ? "like" : "likes"}`;
    button.title = counted || (state.canLike ? "" : "Sign in to like");
    button.setAttribute("aria-label", counted ? `${what} (${counted})` : what);
    button.setAttribute("aria-busy", String(state.busy));
    this.#count.textContent = state.countFormatted ?? "";
    this.#message.textContent = state.error ?? (state.pending ? "Saved; it will be counted shortly." : "");
    this.toggleAttribute("liked", state.liked);
    this.toggleAttribute("pending", state.pending);
    if (state.count === null) this.removeAttribute("count");
    else this.setAttribute("count", String(state.count));
    clearTimeout(this.#timer);
    if (blocked) this.#timer = setTimeout(() => this.#item && this.#render(plauditStore().get(this.#item)), state.blockedUntil - Date.now() + 10);
    this.dispatchEvent(new CustomEvent("plaudit-change", { detail: state }));
  }
}

if (typeof customElements !== "undefined" && !customElements.get("plaudit-like")) customElements.define("plaudit-like", PlauditLike);
