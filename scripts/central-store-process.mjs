// Starts scripts/central-store.mjs as a child process and reads the endpoint
// from its `listening <url>` line: `npm start` (tables in a folder) and the
// tests (in memory) start their central store the same way.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "central-store.mjs");

/**
 * The store's process (its stdin a pipe: closing it stops the store) and its
 * endpoint, which fails if the process exits before it listens.
 */
export function spawnCentralStore(folder) {
  const store = spawn(process.execPath, folder ? [SCRIPT, folder] : [SCRIPT], { stdio: ["pipe", "pipe", "inherit"] });
  const endpoint = new Promise((listening, failed) => {
    let output = "";
    store.stdout.on("data", (chunk) => {
      output += chunk;
      const line = /^listening (\S+)$/m.exec(output);
      if (line) listening(line[1]);
    });
    store.once("exit", (code) => failed(new Error(`central store exited (${code}) before it listened: ${output}`)));
  });
  return { store, endpoint };
}
