/** `post:123` → `["post", "123"]`: D1 keeps type and id apart, ids as TEXT. */
export function splitItem(item: string): [string, string] {
  const colon = item.indexOf(":");
  return [item.slice(0, colon), item.slice(colon + 1)];
}
