// The React demo feed (public/demo/react.html): <LikeButton>s from `@plaudit/client/react`,
// bundled with React by `npm run build:client`. Same query and #token= as the web component's demo.
import { createElement as h } from "react";
import { createRoot } from "react-dom/client";
import { LikeButton, likeStore } from "../src/react.js";

const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromHash) sessionStorage.setItem("plaudit-token", fromHash);
const token = sessionStorage.getItem("plaudit-token");
if (token) likeStore().configure({ token: () => sessionStorage.getItem("plaudit-token") });

const params = new URLSearchParams(location.search);
const start = BigInt(params.get("start") ?? "1");
const n = Math.min(Number(params.get("n") ?? "50"), 500);
const ids = params.get("items")?.split(",") ?? Array.from({ length: n }, (_, i) => String(start + BigInt(i)));

function Feed() {
  return h(
    "main",
    null,
    ids.map((id) => h("article", { key: id, "data-item": id }, h("span", null, `Post ${id}`), h(LikeButton, { item: { item_id: id, item_type: "post" } }))),
  );
}

createRoot(document.getElementById("feed")!).render(h(Feed));
