#!/usr/bin/env node
// A central store on a free 127.0.0.1 port: dynalite (a DynamoDB-API server,
// what ScyllaDB's Alternator speaks). `npm start` keeps its tables on disk in
// the folder given as the first argument; without one (the tests) they live
// in memory. Prints `listening <url>` once it accepts connections. It exits
// when its parent closes stdin, so a parent killed with SIGKILL leaves no
// orphan behind.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";

const path = process.argv[2];
if (path) mkdirSync(path, { recursive: true });
const dynalite = createRequire(import.meta.url)("dynalite");
// Tables are created on first use by the Worker and answer at once, as Alternator's do.
const server = dynalite({ ...(path ? { path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
droppingAbortedRequests(server);

/**
 * dynalite throws from a request's "error" event, so a client that goes away
 * mid-request (a call cut off at its deadline, an object aborted) would take
 * the store down with ECONNRESET. Its handler still answers every request; a
 * request whose client went away is dropped.
 */
function droppingAbortedRequests(server) {
  const handlers = server.listeners("request");
  server.removeAllListeners("request");
  server.on("request", (req, res) => {
    for (const handle of handlers) handle.call(server, req, res);
    req.removeAllListeners("error");
    req.on("error", () => res.destroy());
  });
}

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
