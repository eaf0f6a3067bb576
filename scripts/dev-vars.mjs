// Reads and updates .dev.vars, the local secrets and overrides file that
// `wrangler dev` loads on top of wrangler.toml's vars.
import { existsSync, readFileSync, writeFileSync } from "node:fs";

export function readDevVars(path) {
  if (!existsSync(path)) return {};
  const vars = {};
  for (const line of readFileSync(path, "utf8").split(/\r?\n/)) {
    const match = line.match(/^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/);
    if (!match) continue;
    let value = match[2];
    if (/^".*"$/.test(value) || /^'.*'$/.test(value)) value = value.slice(1, -1);
    vars[match[1]] = value;
  }
  return vars;
}

export function appendDevVar(path, name, value) {
  const current = existsSync(path) ? readFileSync(path, "utf8") : "";
  const separator = current === "" || current.endsWith("\n") ? "" : "\n";
  writeFileSync(path, `${current}${separator}${name}="${value}"\n`);
}
