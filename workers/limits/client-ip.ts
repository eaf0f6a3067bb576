/**
 * The key a client address is counted under: an IPv4 address as it is, an
 * IPv6 address by its /64 (one subscriber usually holds a whole /64 and can
 * pick any address in it, so counting single addresses would count nothing).
 * An IPv4-mapped IPv6 address counts as its IPv4 address. Null when the text
 * is not an address.
 */
export function ipKey(address: string): string | null {
  const text = address.trim().toLowerCase();
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(text)) return text.split(".").every((part) => Number(part) <= 255) ? `ip4:${text}` : null;
  const mapped = text.match(/^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/);
  if (mapped) return ipKey(mapped[1]!);
  const groups = ipv6Groups(text);
  return groups ? `ip6:${groups.slice(0, 4).join(":")}::/64` : null;
}

/** The eight 16-bit groups of an IPv6 address (without a zone), each without leading zeros; null if malformed. */
function ipv6Groups(text: string): string[] | null {
  if (!/^[0-9a-f:]+$/.test(text) || text.split("::").length > 2) return null;
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill("0"), ...right];
  if (groups.some((group) => !/^[0-9a-f]{1,4}$/.test(group))) return null;
  return groups.map((group) => group.replace(/^0+(?=.)/, ""));
}
