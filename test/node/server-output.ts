// A failed test of a file that started a whole server prints the end of that
// server's output: why a server stopped (a port taken, a child that exited)
// is otherwise gone with its state folder.
import { afterEach } from "vitest";
import { serverLogTail } from "../../bench/lib/server";

const LINES = 100;

/** Registers, for the calling file, a print of `output()`'s last lines after each failed test. */
export function printServerOutputOnFailure(output: () => string | undefined): void {
  afterEach(({ task }) => {
    if (task.result?.state !== "fail") return;
    const text = output();
    if (!text) return;
    console.error(`The server's output, last ${LINES} lines, after "${task.name}" failed:\n${text.split("\n").slice(-LINES).join("\n")}`);
  });
}

/** The last lines of the output of a server started by bench/lib/server.ts. */
export function serverLog(stateDir: string | undefined): string | undefined {
  return stateDir && serverLogTail(stateDir, LINES);
}
