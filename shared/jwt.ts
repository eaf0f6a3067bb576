/**
 * HS256 JSON Web Tokens with WebCrypto, shared by the Worker (verify) and the
 * local token command (sign). Only HS256 is accepted: `alg: none` and every
 * other algorithm are refused before any key is touched.
 */

export type JwtClaims = Record<string, unknown> & { sub?: unknown; exp?: unknown; role?: unknown };

export type VerifyResult =
  | { ok: true; claims: JwtClaims }
  | { ok: false; reason: string };

const encoder = new TextEncoder();
const keyCache = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    keyCache.set(secret, key);
  }
  return key;
}

function base64UrlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function base64UrlDecode(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  try {
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function decodeJson(segment: string): Record<string, unknown> | null {
  const bytes = base64UrlDecode(segment);
  if (!bytes) return null;
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export async function signJwt(claims: JwtClaims, secret: string): Promise<string> {
  const header = base64UrlEncode(encoder.encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));
  const payload = base64UrlEncode(encoder.encode(JSON.stringify(claims)));
  const signature = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(`${header}.${payload}`));
  return `${header}.${payload}.${base64UrlEncode(new Uint8Array(signature))}`;
}

/**
 * Verifies signature and expiry against every secret in turn, so a secret can
 * be rotated: the new one signs, the old ones still verify until removed.
 */
export async function verifyJwt(token: string, secrets: readonly string[], nowSeconds: number): Promise<VerifyResult> {
  const parts = token.split(".");
  if (parts.length !== 3) return { ok: false, reason: "token is not a JWT" };
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeJson(headerPart);
  if (!header) return { ok: false, reason: "token header is malformed" };
  if (header.alg !== "HS256") return { ok: false, reason: "token algorithm must be HS256" };
  const signature = base64UrlDecode(signaturePart);
  if (!signature || signature.length !== 32) return { ok: false, reason: "token signature is malformed" };
  const signed = encoder.encode(`${headerPart}.${payloadPart}`);
  let valid = false;
  for (const secret of secrets) {
    if (await crypto.subtle.verify("HMAC", await hmacKey(secret), signature, signed)) {
      valid = true;
      break;
    }
  }
  if (!valid) return { ok: false, reason: "token signature is invalid" };
  const claims = decodeJson(payloadPart);
  if (!claims) return { ok: false, reason: "token payload is malformed" };
  if (typeof claims.exp !== "number" || !Number.isFinite(claims.exp)) {
    return { ok: false, reason: "token has no expiry (exp)" };
  }
  if (claims.exp <= nowSeconds) return { ok: false, reason: "token has expired" };
  return { ok: true, claims };
}
