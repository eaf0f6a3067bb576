// What a reference Worker of bench/reference/ holds, read from outside:
// its D1 rows as an operator would read them, with wrangler, and its work
// still to do as the bench reads it, from /healthz.
import { execFileSync } from "node:child_process";
import type { LocalServer } from "../../bench/lib/server";

/** The rows a query gives on the reference's D1 (`name` is its bench/reference/ file). */
export function referenceRows<T>(server: LocalServer, name: string, query: string): T[] {
  const out = execFileSync(
    "node_modules/.bin/wrangler",
    ["d1", "execute", "DB", "--local", "--persist-to", `${server.stateDir}/wrangler`, "-c", `bench/reference/${name}.toml`, "--json", "--command", query],
    { encoding: "utf8", env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" } },
  );
  return (JSON.parse(out) as { results: T[] }[])[0]!.results;
}

/** Objects whose alarm is set, as the bench reads them before it takes a reference's CPU. */
export async function referenceBusy(server: LocalServer): Promise<number> {
  return ((await (await fetch(`${server.url}/healthz`)).json()) as { busy: number }).busy;
}
