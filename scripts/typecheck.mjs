// `npm run typecheck`: the Worker's project and the Node project checked side
// by side (each tsc keeps about one core busy), failing when either fails.
// `npm test` runs it as test/node/typecheck.test.ts.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const projects = ["tsconfig.json", "tsconfig.node.json"];

const codes = await Promise.all(
  projects.map(
    (project) =>
      new Promise((done) => spawn(process.execPath, [tsc, "-p", project], { stdio: "inherit" }).once("exit", (code, signal) => done(code ?? (signal ? 1 : 0)))),
  ),
);
process.exit(Math.max(...codes));
