// Starts a real DynamoDB-API server (dynalite, in memory) on a free
// 127.0.0.1 port for the test run, and gives its endpoint to the workers
// project, whose Worker uses it as the central store.
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";

type Server = { listen(port: number, host: string, done: () => void): void; address(): AddressInfo; close(done: () => void): void };
const dynalite = createRequire(import.meta.url)("dynalite") as (options: Record<string, number>) => Server;

declare module "vitest" {
  interface ProvidedContext {
    alternatorEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("alternatorEndpoint", `http://127.0.0.1:${server.address().port}`);
  return async () => await new Promise<void>((resolve) => server.close(() => resolve()));
}
