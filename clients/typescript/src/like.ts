// The like button's entry point (`@plaudit/client/like`): importing it defines <plaudit-like>.
export { configurePlaudit, plauditStore, PlauditLike } from "./like-element.js";
export { LikeStore, type LikeState, type LikeStoreOptions, type TokenSource } from "./like-store.js";
export { formatCount } from "./format.js";
