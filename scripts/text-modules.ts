import { readFileSync } from "node:fs";
import type { Plugin } from "vite";

/**
 * The dashboard page and the chart library it inlines are imported as text.
 * `wrangler` does that through its module rules (`*.html` by default, uPlot's
 * files by the `[[rules]]` in wrangler.toml); the test pool goes through Vite,
 * which needs the same files turned into string modules here.
 */
const TEXT_MODULE = /(\.html|\/uPlot\.iife\.min\.js|\/uPlot\.min\.css)$/;

export function textModules(): Plugin {
  return {
    name: "plaudit-text-modules",
    enforce: "pre",
    load(id) {
      const path = id.split("?")[0]!;
      if (!TEXT_MODULE.test(path)) return null;
      return `export default ${JSON.stringify(readFileSync(path, "utf8"))};`;
    },
  };
}
