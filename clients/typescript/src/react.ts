// The React binding (`@plaudit/client/react`); React is an optional peer dependency, needed only here.
import { createElement, useCallback, useSyncExternalStore, type ReactElement } from "react";
import { LikeStore, type LikeState } from "./like-store.js";
import type { ItemRef } from "./types.js";

let pageStore: LikeStore | undefined;

/** The store every hook and button on the page shares unless given another: one batched read and one socket for all. */
export function likeStore(): LikeStore {
  pageStore ??= new LikeStore();
  return pageStore;
}

export type UsePlauditLike = LikeState & { toggle: () => void };

/** One item's like state, read from the shared store, and the toggle that changes it. */
export function usePlauditLike(item: ItemRef, store: LikeStore = likeStore()): UsePlauditLike {
  const { item_id: id, item_type: type } = item;
  const subscribe = useCallback((onChange: () => void) => store.watch({ item_id: id, item_type: type }, onChange), [store, id, type]);
  const state = useSyncExternalStore(subscribe, () => store.get({ item_id: id, item_type: type }));
  const toggle = useCallback(() => store.toggle({ item_id: id, item_type: type }), [store, id, type]);
  return { ...state, toggle };
}

export type LikeButtonProps = { item: ItemRef; store?: LikeStore; label?: string; className?: string };

/** A like toggle: a real <button> with aria-pressed, the short count shown and the exact one in its tooltip. */
export function LikeButton({ item, store, label, className }: LikeButtonProps): ReactElement {
  const like = usePlauditLike(item, store);
  const what = label ?? `Like this ${item.item_type}`;
  const counted = like.count === null ? "" : `${like.count.toLocaleString()} ${like.count === 1 ? "like" : "likes"}`;
  return createElement(
    "span",
    { className, "data-liked": like.liked, "data-pending": like.pending || undefined },
    createElement(
      "button",
      {
        type: "button",
        "aria-pressed": like.liked,
        "aria-label": counted ? `${what} (${counted})` : what,
        "aria-busy": like.busy,
        title: counted || undefined,
        disabled: !like.loaded || !like.canLike || like.blockedUntil > Date.now(),
        onClick: like.toggle,
      },
      createElement("span", { "aria-hidden": true }, "\u2665"),
      like.countFormatted === null ? null : createElement("span", null, ` ${like.countFormatted}`),
    ),
    createElement("span", { role: "status" }, like.error ?? (like.pending ? "Saved; it will be counted shortly." : "")),
  );
}
