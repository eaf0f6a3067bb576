// Serves JSON Web Key Sets on a free 127.0.0.1 port for the workerd tests,
// standing in for an identity provider. Each set has its own path, so a test
// that takes its provider down or rotates its keys meets no other test:
//   GET  /<set>/jwks.json   the set's public keys (503 while the set is down)
//   POST /<set>/keys?alg=   a new key (RS256, ES256, EdDSA) with a new kid; answers the private JWK
//   POST /<set>/down, /up   the provider fails or serves again
//   GET  /<set>/fetches     how many times the key set was asked for
import { generateKeyPairSync, randomUUID, type JsonWebKey } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  interface ProvidedContext {
    jwksServer: string;
  }
}

type KeySet = { keys: JsonWebKey[]; down: boolean; fetches: number };

function newKey(alg: string): { publicJwk: JsonWebKey; privateJwk: JsonWebKey } {
  const pair =
    alg === "RS256"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : alg === "ES256"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : generateKeyPairSync("ed25519");
  const kid = randomUUID();
  const meta = { kid, alg, use: "sig" };
  return { publicJwk: { ...pair.publicKey.export({ format: "jwk" }), ...meta }, privateJwk: { ...pair.privateKey.export({ format: "jwk" }), ...meta } };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sets = new Map<string, KeySet>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const [, name, action] = url.pathname.split("/");
    const set = sets.get(name!) ?? { keys: [], down: false, fetches: 0 };
    sets.set(name!, set);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && action === "jwks.json") {
      set.fetches++;
      return set.down ? send(503, { error: "down" }) : send(200, { keys: set.keys });
    }
    if (req.method === "GET" && action === "fetches") return send(200, { fetches: set.fetches });
    if (req.method === "POST" && action === "keys") {
      const { publicJwk, privateJwk } = newKey(url.searchParams.get("alg") ?? "RS256");
      set.keys.push(publicJwk);
      return send(200, { privateJwk, publicJwk });
    }
    if (req.method === "POST" && (action === "down" || action === "up")) {
      set.down = action === "down";
      return send(200, { down: set.down });
    }
    send(404, { error: "not_found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("jwksServer", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => await new Promise<void>((resolve) => server.close(() => resolve()));
}
