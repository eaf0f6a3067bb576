#!/usr/bin/env node
// The embedded central store of `npm start`: dynalite (a DynamoDB-API
// server, what ScyllaDB's Alternator speaks) on a free 127.0.0.1 port, its
// tables on disk in the folder given as the first argument. Prints
// `listening <url>` once it accepts connections. It exits when its parent
// closes stdin, so a parent killed with SIGKILL leaves no orphan behind.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";

const path = process.argv[2];
if (!path) {
  console.error("usage: node scripts/central-store.mjs <folder>");
  process.exit(2);
}
mkdirSync(path, { recursive: true });
const dynalite = createRequire(import.meta.url)("dynalite");
// Tables are created on first use by the Worker and answer at once, as Alternator's do.
const server = dynalite({ path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });

let closing = false;
function stop() {
  if (closing) return;
  closing = true;
  // Closing flushes LevelDB; a stuck close must not keep the port.
  setTimeout(() => process.exit(0), 3_000).unref();
  server.close(() => process.exit(0));
}
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, stop);

server.listen(0, "127.0.0.1", () => console.log(`listening http://127.0.0.1:${server.address().port}`));
