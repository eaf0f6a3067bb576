// Starts a real DynamoDB-API server (scripts/central-store.mjs: dynalite, in
// memory) on a free 127.0.0.1 port for a project, and gives its endpoint to
// the project's Worker, which uses it as the central store. It runs in a
// process of its own: in Vitest's main process its work would queue behind
// the module graphs that process serves to every test file at once.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  interface ProvidedContext {
    alternatorEndpoint: string;
  }
}

const SCRIPT = resolve(import.meta.dirname, "../../scripts/central-store.mjs");

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const store = spawn(process.execPath, [SCRIPT], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((done) => store.once("exit", () => done()));
  const endpoint = await new Promise<string>((listening, failed) => {
    let output = "";
    store.stdout!.on("data", (chunk) => {
      output += chunk;
      const line = /^listening (\S+)$/m.exec(output);
      if (line) listening(line[1]!);
    });
    store.once("exit", (code) => failed(new Error(`the tests' central store exited (${code}) before it listened: ${output}`)));
  });
  project.provide("alternatorEndpoint", endpoint);
  return async () => {
    // Closing its stdin is the store's signal to stop (it also stops if this process dies).
    store.stdin!.end();
    await exited;
  };
}
