import type { AlertState } from "./alerts";
import { METRIC_HELP } from "./catalog";
import { BUCKET_BOUNDS } from "./histogram";
import { labelText, type Series, type SeriesMap } from "./series";

export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

function value(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : "-Inf";
  return String(n);
}

function line(name: string, labels: string, v: number): string {
  return labels === "" ? `${name} ${value(v)}` : `${name}{${labels}} ${value(v)}`;
}

function join(labels: string, extra: string): string {
  return labels === "" ? extra : `${labels},${extra}`;
}

function seriesLines(s: Series): string[] {
  const labels = labelText(s.labels);
  if (s.kind !== "histogram") return [line(s.name, labels, s.value)];
  const lines: string[] = [];
  let cumulative = 0;
  BUCKET_BOUNDS.forEach((bound, i) => {
    cumulative += s.buckets[i]!;
    lines.push(line(`${s.name}_bucket`, join(labels, `le="${bound}"`), cumulative));
  });
  lines.push(line(`${s.name}_bucket`, join(labels, 'le="+Inf"'), s.count));
  lines.push(line(`${s.name}_sum`, labels, s.sum), line(`${s.name}_count`, labels, s.count));
  return lines;
}

function family(name: string, type: string, help: string, lines: string[]): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines];
}

function alertFamilies(alerts: readonly AlertState[]): string[] {
  const label = (a: AlertState) => `name="${a.name}"`;
  return [
    ...family(
      "plaudit_alert",
      "gauge",
      "1 while the named alert rule fires (see docs/alerts.rules.yml), else 0.",
      alerts.map((a) => line("plaudit_alert", label(a), a.firing ? 1 : 0)),
    ),
    ...family(
      "plaudit_alert_value",
      "gauge",
      "The value the named alert rule compares with its threshold, when there is data.",
      alerts.filter((a) => a.value !== null).map((a) => line("plaudit_alert_value", label(a), a.value!)),
    ),
    ...family(
      "plaudit_alert_threshold",
      "gauge",
      "The named alert rule's threshold.",
      alerts.map((a) => line("plaudit_alert_threshold", label(a), a.threshold)),
    ),
  ];
}

/** The Prometheus text exposition format (0.0.4): one family per name, series sorted, then the alert gauges. */
export function renderExposition(totals: SeriesMap, alerts: readonly AlertState[]): string {
  const byName = new Map<string, Series[]>();
  for (const key of [...totals.keys()].sort()) {
    const s = totals.get(key)!;
    const list = byName.get(s.name) ?? [];
    list.push(s);
    byName.set(s.name, list);
  }
  const out: string[] = [];
  for (const name of [...byName.keys()].sort()) {
    const series = byName.get(name)!;
    const help = METRIC_HELP[name] ?? `plaudit metric ${name}.`;
    out.push(...family(name, series[0]!.kind, help, series.flatMap(seriesLines)));
  }
  out.push(...alertFamilies(alerts));
  return `${out.join("\n")}\n`;
}
