/** A table's rows as lines of padded cells, for a terminal: the first `left` columns aligned left, the rest right. */
export function alignedRows(rows: readonly (readonly string[])[], left = 1): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c < left ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  "));
}
