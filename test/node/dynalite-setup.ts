// Starts a real DynamoDB-API server (scripts/central-store.mjs: dynalite, in
// memory) on a free 127.0.0.1 port for a project, and gives its endpoint to
// the project's Worker, which uses it as the central store. It runs in a
// process of its own: in Vitest's main process its work would queue behind
// the module graphs that process serves to every test file at once.
import type { TestProject } from "vitest/node";
import { spawnCentralStore } from "../../scripts/central-store-process.mjs";

declare module "vitest" {
  interface ProvidedContext {
    alternatorEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { store, endpoint } = spawnCentralStore();
  const exited = new Promise<void>((done) => store.once("exit", () => done()));
  project.provide("alternatorEndpoint", await endpoint);
  return async () => {
    // Closing its stdin is the store's signal to stop (it also stops if this process dies).
    store.stdin.end();
    await exited;
  };
}
