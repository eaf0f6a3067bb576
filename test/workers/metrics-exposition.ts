import type { Overview } from "../../metrics/overview";
import { call, json } from "./helpers";

/**
 * A strict reader of the Prometheus text exposition format (0.0.4), written
 * for the tests because the parser packages at hand drop the labels of
 * histograms. It throws on anything the format does not allow, and on a
 * sample without a TYPE line: a malformed line, a bad escape, a sample before
 * its family's TYPE, a family split in
 * two, a repeated series, a histogram sample with a foreign suffix, buckets
 * that go down, or a +Inf bucket that differs from _count.
 */
export type Labels = Record<string, string>;
export type Sample = { name: string; labels: Labels; value: number };
export type Family = { name: string; type: string; help: string | null; samples: Sample[] };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = ["counter", "gauge", "histogram", "summary", "untyped"];

class ExpositionError extends Error {
  constructor(lineNo: number, message: string) {
    super(`line ${lineNo}: ${message}`);
  }
}

function parseValue(text: string, lineNo: number): number {
  if (text === "NaN") return NaN;
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new ExpositionError(lineNo, `bad value ${text}`);
  return Number(text);
}

function parseLabels(text: string, lineNo: number): { labels: Labels; rest: string } {
  const labels: Labels = {};
  let rest = text.slice(1);
  while (!rest.startsWith("}")) {
    const name = rest.match(LABEL_NAME)?.[0];
    if (!name || rest[name.length] !== "=" || rest[name.length + 1] !== '"') throw new ExpositionError(lineNo, "bad label");
    if (name in labels) throw new ExpositionError(lineNo, `label ${name} twice`);
    rest = rest.slice(name.length + 2);
    let value = "";
    for (;;) {
      const c = rest[0];
      if (c === undefined || c === "\n") throw new ExpositionError(lineNo, "unterminated label value");
      rest = rest.slice(1);
      if (c === '"') break;
      if (c !== "\\") {
        value += c;
        continue;
      }
      const escaped = rest[0];
      rest = rest.slice(1);
      if (escaped === "\\") value += "\\";
      else if (escaped === '"') value += '"';
      else if (escaped === "n") value += "\n";
      else throw new ExpositionError(lineNo, `bad escape \\${escaped}`);
    }
    labels[name] = value;
    if (rest.startsWith(",")) rest = rest.slice(1);
    else if (!rest.startsWith("}")) throw new ExpositionError(lineNo, "expected , or }");
  }
  return { labels, rest: rest.slice(1) };
}

function parseSample(line: string, lineNo: number): Sample {
  const name = line.match(METRIC_NAME)?.[0];
  if (!name) throw new ExpositionError(lineNo, "bad metric name");
  let rest = line.slice(name.length);
  let labels: Labels = {};
  if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, lineNo));
  const fields = rest.split(" ");
  if (fields[0] !== "" || fields.length < 2 || fields.length > 3) throw new ExpositionError(lineNo, "expected ' value [timestamp]'");
  if (fields[2] !== undefined && !/^-?\d+$/.test(fields[2])) throw new ExpositionError(lineNo, "bad timestamp");
  return { name, labels, value: parseValue(fields[1]!, lineNo) };
}

/** The family a sample name belongs to, given the family's type. */
function belongsTo(family: Family, sampleName: string): boolean {
  if (family.type !== "histogram" && family.type !== "summary") return sampleName === family.name;
  const suffixes = family.type === "histogram" ? ["_bucket", "_sum", "_count"] : ["", "_sum", "_count"];
  return suffixes.some((s) => sampleName === family.name + s);
}

const seriesId = (s: Sample) =>
  `${s.name}{${Object.keys(s.labels).sort().map((k) => `${k}=${JSON.stringify(s.labels[k])}`).join(",")}}`;

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const id = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(id) ?? { buckets: [] };
    if (s.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      group.buckets.push([parseValue(le, 0), s.value]);
    } else if (s.name.endsWith("_count")) group.count = s.value;
    groups.set(id, group);
  }
  for (const [id, { buckets, count }] of groups) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${family.name}${id}: no +Inf bucket`);
    sorted.forEach(([, v], i) => {
      if (i > 0 && v < sorted[i - 1]![1]) throw new Error(`${family.name}${id}: buckets go down`);
    });
    if (sorted.at(-1)![1] !== count) throw new Error(`${family.name}${id}: +Inf bucket differs from _count`);
  }
}

export function parseExposition(text: string): Family[] {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families: Family[] = [];
  const byName = new Map<string, Family>();
  const seen = new Set<string>();
  let current: Family | null = null;
  text
    .slice(0, -1)
    .split("\n")
    .forEach((line, i) => {
      const lineNo = i + 1;
      if (line.trim() === "") return;
      const meta = line.match(/^# (HELP|TYPE) ([^ ]+) ?(.*)$/);
      if (meta) {
        const [, kind, name, rest] = meta;
        if (!METRIC_NAME.test(name!) || name!.match(METRIC_NAME)![0] !== name) throw new ExpositionError(lineNo, "bad name");
        let family = byName.get(name!);
        if (family && family !== current) throw new ExpositionError(lineNo, `${name} appears twice`);
        if (family && family.samples.length > 0) throw new ExpositionError(lineNo, `${kind} after ${name}'s samples`);
        if (!family) {
          family = { name: name!, type: "untyped", help: null, samples: [] };
          families.push(family);
          byName.set(name!, family);
          current = family;
        }
        if (kind === "TYPE") {
          if (!TYPES.includes(rest!)) throw new ExpositionError(lineNo, `unknown type ${rest}`);
          family.type = rest!;
        } else {
          if (family.help !== null) throw new ExpositionError(lineNo, "HELP twice");
          family.help = rest!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
        }
        return;
      }
      if (line.startsWith("#")) return;
      const sample = parseSample(line, lineNo);
      if (!current || !belongsTo(current, sample.name)) throw new ExpositionError(lineNo, `${sample.name} outside its family`);
      const id = seriesId(sample);
      if (seen.has(id)) throw new ExpositionError(lineNo, `${id} twice`);
      seen.add(id);
      current.samples.push(sample);
    });
  for (const family of families) if (family.type === "histogram") checkHistogram(family);
  return families;
}

export async function scrape(token: string): Promise<Family[]> {
  const res = await call("GET", "/metrics", { token });
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return parseExposition(await res.text());
}

function sameLabels(a: Labels, b: Labels): boolean {
  return Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
}

/** The value of one sample (by its full name: `x_total`, `x_count`, `x_bucket`...), 0 when absent. */
export function sample(families: Family[], name: string, labels: Labels = {}): number {
  for (const family of families) {
    const found = family.samples.find((s) => s.name === name && sameLabels(s.labels, labels));
    if (found) return found.value;
  }
  return 0;
}

/** The sum of a metric's samples (by its full name) whose labels pass `match`: every one by default; 0 when none. */
export function total(families: Family[], name: string, match: (labels: Labels) => boolean = () => true): number {
  const family = families.find((f) => f.name === name);
  return (family?.samples ?? []).filter((s) => s.name === name && match(s.labels)).reduce((sum, s) => sum + s.value, 0);
}

/** The dashboard's data, as the page gets it. */
export async function dashboardData(token: string): Promise<Overview> {
  const res = await call("GET", "/v1/admin/dashboard.json", { token });
  if (res.status !== 200) throw new Error(`GET /v1/admin/dashboard.json answered ${res.status}`);
  return json<Overview>(res);
}
