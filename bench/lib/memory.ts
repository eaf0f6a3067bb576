// Resident memory of a local server's processes, each named by its part:
// `wrangler dev` runs the Worker in one workerd and its own proxy (the port
// the clients call, and the inspector proxy) in another.
import { execFileSync } from "node:child_process";

export type Part = "worker runtime" | "wrangler proxy" | "wrangler" | "central store" | "other";

/** The part a process of the group plays, from its command line. */
export function partOf(args: string): Part {
  if (/\bworkerd\b/.test(args)) return args.includes("--inspector-addr") ? "worker runtime" : "wrangler proxy";
  if (args.includes("wrangler-dist/cli.js")) return "wrangler";
  if (args.includes("central-store.mjs")) return "central store";
  return "other";
}

/** Resident MB of each part of process group `group` (ps); an empty map once the group is gone. */
export function residentByPart(group: number): Map<Part, number> {
  const parts = new Map<Part, number>();
  let out = "";
  try {
    out = execFileSync("ps", ["-o", "rss=,args=", "-g", String(group)], { encoding: "utf8" });
  } catch {
    return parts;
  }
  for (const line of out.split("\n")) {
    const match = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const part = partOf(match[2]!);
    parts.set(part, (parts.get(part) ?? 0) + Number(match[1]) / 1024);
  }
  return parts;
}
