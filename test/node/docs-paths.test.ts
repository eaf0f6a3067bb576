import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

/** The docs a newcomer reads; every file path they name must exist. */
const DOCS = ["README.md", "clients/typescript/README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

const PATH = /^[\w.-]+(\/[\w.-]+)*\/?$/;
// A bare file name counts only for another doc (`architecture.md`); others (`scylla.yaml`) may be another program's.
const DOC = /\.md$/;

/** Paths named in `code` spans and link targets: with a slash, or a doc's name; package names (`@scope/x`) and URLs are not paths. */
function namedPaths(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`([^`\s]+)`/g), ...markdown.matchAll(/\]\(([^)\s#]+)\)/g)].map((m) => m[1]!);
  return spans.filter((s) => PATH.test(s) && (s.includes("/") || DOC.test(s)));
}

/** Git-ignored paths (build output, local state, reports) are made by running things, not committed. */
function ignored(path: string): boolean {
  const patterns = readFileSync(join(root, ".gitignore"), "utf8").split("\n").map((l) => l.trim()).filter(Boolean);
  return patterns.some((p) => {
    const entry = p.replace(/\/$/, "");
    return !entry.includes("*") && (path === entry || path.startsWith(`${entry}/`) || path.includes(`/${entry}/`));
  });
}

function missing(doc: string): string[] {
  const text = readFileSync(join(root, doc), "utf8");
  return namedPaths(text).filter((path) => {
    if (ignored(path)) return false;
    return !existsSync(join(root, path)) && !existsSync(join(root, dirname(doc), path));
  });
}

describe("the docs", () => {
  it.each(DOCS)("%s names only files that exist", (doc) => {
    expect(missing(doc)).toEqual([]);
  });

  it("recognise paths in code spans and links, and leave package names, routes and URLs alone", () => {
    const text = "See `docs/nope.md`, `DESIGN.md`, `scylla.yaml`, [ops](docs/operations.md), `@scope/pkg`, `/v1/like`, `https://x.test/a` and `npm test`.";
    expect(namedPaths(text)).toEqual(["docs/nope.md", "DESIGN.md", "docs/operations.md"]);
  });
});
