// Starts a real DynamoDB-API server (dynalite, in memory) on a free
// 127.0.0.1 port for the test run, and gives its endpoint to the workers
// project, whose Worker uses it as the central store.
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";

type Server = Omit<HttpServer, "address"> & { address(): AddressInfo };
const dynalite = createRequire(import.meta.url)("dynalite") as (options: Record<string, number>) => Server;

declare module "vitest" {
  interface ProvidedContext {
    alternatorEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  droppingAbortedRequests(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("alternatorEndpoint", `http://127.0.0.1:${server.address().port}`);
  return async () => await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * dynalite throws from a request's "error" event, so a client that goes
 * away mid-request (a call cut off at its deadline, an object aborted by a
 * test) took the whole test run's process down with ECONNRESET. Its handler
 * still answers every request; a request whose client went away is dropped.
 */
function droppingAbortedRequests(server: Server): void {
  const handlers = server.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners("request");
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    for (const handle of handlers) handle.call(server, req, res);
    req.removeAllListeners("error");
    req.on("error", () => res.destroy());
  });
}
