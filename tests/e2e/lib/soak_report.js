// The soak's report: its samples and actions as JSON, a Markdown summary, and a plot of the
// process tree's memory over the day above a lane of ticks per kind of action. The plot is one
// list of shapes written twice: as SVG (to read in a browser) and as ImageMagick's own vector
// format (MVG), which `convert` renders to the PNG with no SVG library (ImageMagick reads SVG
// only through rsvg-convert, which the project does not install).
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const MIB = 1024;

/** A process name (as /proc's comm has it, 15 characters) to the part of Perch it is. */
export function processKind(name) {
  if (name === "perch-desktop") return "app";
  if (name.startsWith("WebKitWebProces")) return "web pages";
  if (name.startsWith("WebKitNetwork")) return "network";
  if (name.startsWith("perch-mcp") || name === "node") return "MCP servers";
  return "other";
}
const KINDS = ["app", "web pages", "network", "MCP servers", "other"];
const KIND_COLOURS = { total: "#222222", app: "#1f77b4", "web pages": "#ff7f0e", network: "#2ca02c", "MCP servers": "#9467bd", other: "#8c564b" };
const ACTION_COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324", "#469990", "#800000", "#808000", "#000075", "#a9a9a9"];

/** PSS in KiB by kind of process. */
function byKind(sample) {
  const kinds = Object.fromEntries(KINDS.map((k) => [k, 0]));
  for (const [name, kib] of Object.entries(sample.pssByName)) kinds[processKind(name)] += kib;
  return kinds;
}

/** The least-squares slope of `ys` against `xs`, or null with fewer than two distinct xs. */
function slope(xs, ys) {
  const n = xs.length;
  if (n < 2) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  return sxx === 0 ? null : sxy / sxx;
}

const median = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : null);
const mib = (kib) => (kib / MIB).toFixed(1);
const signed = (x, digits = 1) => `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;

/**
 * The figures the report states: start (the sample before the first action) against end (the
 * last sample, after the idle), the slope of memory over the second half of the day's actions,
 * descriptors, threads, children and zombies, and what was done.
 */
export function summarize({ samples, actions }) {
  const start = samples.find((s) => s.phase === "start") ?? samples[0];
  const end = samples.at(-1);
  const done = actions.filter((a) => a.ok).length;
  const half = actions.length / 2;
  const secondHalf = samples.filter((s) => s.phase === "day" && s.actions >= half);
  const per100 = (values) => {
    const k = slope(secondHalf.map((s) => s.actions), values);
    return k === null ? null : (k * 100) / MIB;
  };
  const kindsSlope = Object.fromEntries(KINDS.map((kind) => [kind, per100(secondHalf.map((s) => byKind(s)[kind]))]));
  const counts = {};
  for (const a of actions) {
    counts[a.kind] ??= { done: 0, failed: 0, ms: [] };
    counts[a.kind][a.ok ? "done" : "failed"] += 1;
    if (a.ok) counts[a.kind].ms.push(a.ms);
  }
  // What PSS did across each action (the tree, the app, the pages): the last sample before it
  // began to the first after it ended. Coarse (a sample every few seconds, neighbours share
  // samples), but a kind whose memory is kept stands out.
  for (const a of actions) {
    const before = samples.findLast((s) => s.t <= a.t - a.ms);
    const after = samples.find((s) => s.t >= a.t);
    if (!before || !after) continue;
    const [was, is] = [byKind(before), byKind(after)];
    (counts[a.kind].deltas ??= []).push({ tree: after.pss - before.pss, app: is.app - was.app, web: is["web pages"] - was["web pages"] });
  }
  const dayEnd = samples.filter((s) => s.phase === "day").at(-1) ?? end;
  return {
    start,
    end,
    dayEnd,
    peak: samples.reduce((p, s) => (s.pss > p.pss ? s : p), start),
    change: (end.pss - start.pss) / start.pss,
    slopePer100: per100(secondHalf.map((s) => s.pss)),
    slopeSamples: secondHalf.length,
    kindsSlope,
    zombiesMax: Math.max(...samples.map((s) => s.zombies)),
    sampleCount: samples.length,
    zombieSamples: samples.filter((s) => s.zombies > 0).length,
    zombieNames: [...new Set(samples.flatMap((s) => s.processes.filter((p) => p[2] === "Z").map((p) => p[1])))],
    actionsDone: done,
    actionsFailed: actions.length - done,
    counts,
    minutes: (actions.at(-1)?.t ?? 0) / 60_000,
  };
}

/** Which processes the end has that the start had not, and the other way round, by name. */
function processChange(start, end) {
  const names = (sample) => sample.processes.slice(1).map((p) => p[1]);
  const less = (a, b) => {
    const rest = [...b];
    return a.filter((n) => {
      const i = rest.indexOf(n);
      if (i < 0) return true;
      rest.splice(i, 1);
      return false;
    });
  };
  const gone = less(names(start), names(end));
  const added = less(names(end), names(start));
  const parts = [gone.length ? `gone: ${gone.join(", ")}` : "", added.length ? `new: ${added.join(", ")}` : ""].filter(Boolean);
  return parts.length ? ` (${parts.join("; ")})` : "";
}

/** The summary as the lines printed and put at the top of soak.md. */
export function summaryLines(summary, meta) {
  const { start, end, dayEnd, peak } = summary;
  const slopeText = (x) => (x === null ? "n/a" : `${signed(x, 2)} MiB`);
  const lines = [
    `soak: ${summary.actionsDone} actions done, ${summary.actionsFailed} failed, in ${summary.minutes.toFixed(1)} min (SOAK_SCALE ${meta.scale}, ${meta.app})`,
    `tree PSS: start ${mib(start.pss)} MiB -> end ${mib(end.pss)} MiB (${signed(summary.change * 100)}%), hidden ${Math.round(meta.idleMs / 1000)} s at the end; at the day's last action ${mib(dayEnd.pss)} MiB; peak ${mib(peak.pss)} MiB after ${peak.actions} actions`,
    `second half of the day: ${slopeText(summary.slopePer100)} per 100 actions (least squares over ${summary.slopeSamples} samples); by part: ${KINDS.map((k) => `${k} ${slopeText(summary.kindsSlope[k])}`).join(", ")}`,
    `descriptors ${start.fds} -> ${end.fds}; threads ${start.threads} -> ${end.threads}; child processes ${start.children} -> ${end.children}${processChange(start, end)}; zombies at most ${summary.zombiesMax}${summary.zombiesMax ? ` (${summary.zombieNames.join(", ")}, in ${summary.zombieSamples} of ${summary.sampleCount} samples)` : ""}`,
    `actions: ${Object.entries(summary.counts).map(([k, c]) => `${k} ${c.done}${c.failed ? ` (${c.failed} failed)` : ""}`).join(", ")}`,
  ];
  return lines;
}

function markdown(summary, meta, samples, actions) {
  const { start, end } = summary;
  const names = [...new Set([...Object.keys(start.pssByName), ...Object.keys(end.pssByName)])].sort();
  const row = (cells) => `| ${cells.join(" | ")} |`;
  const halves = (kind) => {
    const mine = actions.filter((a) => a.kind === kind && a.ok);
    const cut = Math.ceil(mine.length / 2);
    return [median(mine.slice(0, cut).map((a) => a.ms)), median(mine.slice(cut).map((a) => a.ms))];
  };
  return [
    "# Soak: a day in minutes",
    "",
    ...summaryLines(summary, meta).map((l) => `- ${l}`),
    "",
    "![tree PSS over the day](soak.png)",
    "",
    "## Memory by process (PSS, MiB)",
    "",
    row(["process", "start", "end", "change"]),
    row(["---", "---:", "---:", "---:"]),
    ...names.map((n) => {
      const [a, b] = [start.pssByName[n], end.pssByName[n]];
      return row([n, a === undefined ? "none" : mib(a), b === undefined ? "gone" : mib(b), signed(((b ?? 0) - (a ?? 0)) / MIB)]);
    }),
    row(["**tree**", mib(start.pss), mib(end.pss), signed((end.pss - start.pss) / MIB)]),
    "",
    "Start: the sample before the first action (the window shown, start-up settled). End: the last sample, after the window was hidden and left idle.",
    "",
    "## Actions",
    "",
    row(["kind", "done", "failed", "median ms, first half", "median ms, second half", "across it, MiB: tree", "app", "web pages", "app, summed"]),
    row(["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
    ...Object.entries(summary.counts).map(([k, c]) => {
      const deltas = c.deltas ?? [];
      const of = (part) => deltas.map((d) => d[part]);
      const across = deltas.length
        ? [...["tree", "app", "web"].map((part) => signed(median(of(part)) / MIB)), signed(of("app").reduce((a, b) => a + b, 0) / MIB)]
        : ["", "", "", ""];
      return row([k, c.done, c.failed, ...halves(k).map((x) => (x === null ? "" : Math.round(x))), ...across]);
    }),
    "",
    "Across it: PSS from the last sample before the action began to the first after it ended (medians, and the app process's changes summed). Neighbouring actions share samples, so the figures overlap; a kind whose memory is kept still stands out.",
    "",
    `${samples.length} samples, every ${meta.sampleMs} ms; every action with its time is in soak.json.`,
    ...(meta.notes ?? []).map((n) => `\n${n}`),
    "",
  ].join("\n");
}

/** The plot as shapes: {line, polyline, rect, text}, in pixels. */
function plotShapes(samples, actions) {
  const W = 1280;
  const kindsOfAction = [...new Set(actions.map((a) => a.kind))];
  const lane = 16;
  const plot = { x: 70, y: 50, w: 960, h: 380 };
  const lanesTop = plot.y + plot.h + 56;
  const H = lanesTop + kindsOfAction.length * lane + 20;
  const tMax = Math.max(1, samples.at(-1)?.t ?? 1, actions.at(-1)?.t ?? 1);
  const series = samples.map((s) => ({ t: s.t, total: s.pss, ...byKind(s) }));
  const yMax = Math.max(...series.map((s) => s.total)) / MIB;
  const yStep = niceStep(yMax / 6);
  const yTop = Math.ceil(yMax / yStep) * yStep;
  const minutes = tMax / 60_000;
  const xStep = niceStep(minutes / 10);
  const X = (t) => plot.x + (t / tMax) * plot.w;
  const Y = (kib) => plot.y + plot.h - (kib / MIB / yTop) * plot.h;
  const shapes = [{ rect: [0, 0, W, H], fill: "#ffffff" }];

  const idle = samples.find((s) => s.phase === "idle" || s.phase === "final");
  if (idle) {
    shapes.push({ rect: [X(idle.t), plot.y, plot.x + plot.w - X(idle.t), plot.h], fill: "#eeeeee" });
    shapes.push({ text: [X(idle.t) + 4, plot.y + 14, "hidden, idle"], size: 11, fill: "#666666" });
  }
  for (let v = 0; v <= yTop + 1e-9; v += yStep) {
    const y = plot.y + plot.h - (v / yTop) * plot.h;
    shapes.push({ line: [plot.x, y, plot.x + plot.w, y], stroke: "#dddddd" });
    shapes.push({ text: [plot.x - 6, y + 4, String(Math.round(v))], size: 11, anchor: "end" });
  }
  for (let m = 0; m <= minutes + 1e-9; m += xStep) {
    const x = X(m * 60_000);
    shapes.push({ line: [x, plot.y + plot.h, x, plot.y + plot.h + 5], stroke: "#444444" });
    shapes.push({ text: [x, plot.y + plot.h + 18, String(+m.toFixed(2))], size: 11, anchor: "middle" });
  }
  shapes.push({ rect: [plot.x, plot.y, plot.w, plot.h], stroke: "#444444" });
  shapes.push({ text: [plot.x + plot.w / 2, plot.y + plot.h + 32, "minutes"], size: 12, anchor: "middle" });
  shapes.push({ text: [14, plot.y - 12, "PSS, MiB"], size: 12 });
  shapes.push({ text: [plot.x, 24, "Perch's process tree over the day: memory (PSS) by part, and what was done when"], size: 15, weight: "bold" });

  const legendX = plot.x + plot.w + 20;
  ["total", ...KINDS].forEach((kind, i) => {
    const points = series.map((s) => [X(s.t), Y(s[kind])]);
    shapes.push({ polyline: points, stroke: KIND_COLOURS[kind], width: kind === "total" ? 2.5 : 1.5 });
    const y = plot.y + 10 + i * 20;
    shapes.push({ line: [legendX, y, legendX + 22, y], stroke: KIND_COLOURS[kind], width: 3 });
    shapes.push({ text: [legendX + 28, y + 4, kind === "total" ? "tree (total)" : kind], size: 12 });
  });

  kindsOfAction.forEach((kind, i) => {
    const y = lanesTop + i * lane;
    const colour = ACTION_COLOURS[i % ACTION_COLOURS.length];
    shapes.push({ line: [plot.x, y + lane - 2, plot.x + plot.w, y + lane - 2], stroke: "#eeeeee" });
    for (const a of actions.filter((a) => a.kind === kind)) {
      const x0 = X(a.t - a.ms);
      // An action drawn over the time it took, at least a tick wide; a failure in black.
      shapes.push({ rect: [x0, y + 2, Math.max(1.5, X(a.t) - x0), lane - 5], fill: a.ok ? colour : "#000000" });
    }
    shapes.push({ text: [plot.x + plot.w + 8, y + lane - 4, `${kind} (${actions.filter((a) => a.kind === kind).length})`], size: 11, fill: colour });
  });
  shapes.push({ text: [plot.x, lanesTop - 6, "actions (each drawn over the time it took)"], size: 12 });
  return { W, H, shapes };
}

/** 1, 2 or 5 times a power of ten, at least `raw`. */
function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
}

const r = (n) => Math.round(n * 10) / 10;

function toSvg({ W, H, shapes }) {
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const body = shapes.map((s) => {
    const stroke = `stroke="${s.stroke ?? "none"}" stroke-width="${s.width ?? 1}" stroke-linejoin="round"`;
    if (s.rect) return `<rect x="${r(s.rect[0])}" y="${r(s.rect[1])}" width="${r(s.rect[2])}" height="${r(s.rect[3])}" fill="${s.fill ?? "none"}" ${stroke}/>`;
    if (s.line) return `<line x1="${r(s.line[0])}" y1="${r(s.line[1])}" x2="${r(s.line[2])}" y2="${r(s.line[3])}" ${stroke}/>`;
    if (s.polyline) return `<polyline points="${s.polyline.map(([x, y]) => `${r(x)},${r(y)}`).join(" ")}" fill="none" ${stroke}/>`;
    const [x, y, text] = s.text;
    return `<text x="${r(x)}" y="${r(y)}" font-family="DejaVu Sans" font-size="${s.size}" font-weight="${s.weight ?? "normal"}" text-anchor="${s.anchor ?? "start"}" fill="${s.fill ?? "#222222"}">${esc(text)}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">\n${body.join("\n")}\n</svg>\n`;
}

function toMvg({ W, H, shapes }) {
  const esc = (s) => s.replace(/\\/g, "\\\\").replace(/'/g, "\\'");
  const body = shapes.map((s) => {
    // Round joins: ImageMagick draws mitred joins of a dense line as spikes across the plot.
    const style = [`stroke '${s.stroke ?? "none"}'`, `stroke-width ${s.width ?? 1}`, `fill '${s.fill ?? "none"}'`, "stroke-linejoin round"];
    let shape;
    if (s.rect) shape = `rectangle ${r(s.rect[0])},${r(s.rect[1])} ${r(s.rect[0] + s.rect[2])},${r(s.rect[1] + s.rect[3])}`;
    else if (s.line) shape = `line ${r(s.line[0])},${r(s.line[1])} ${r(s.line[2])},${r(s.line[3])}`;
    else if (s.polyline) shape = s.polyline.length > 1 ? `polyline ${s.polyline.map(([x, y]) => `${r(x)},${r(y)}`).join(" ")}` : "";
    else {
      const [x, y, text] = s.text;
      const anchor = { start: "start", middle: "middle", end: "end" }[s.anchor ?? "start"];
      style.splice(0, 4, "stroke 'none'", `fill '${s.fill ?? "#222222"}'`, `font-size ${s.size}`, `font-weight ${s.weight === "bold" ? 700 : 400}`, "font-family 'DejaVu Sans'", `text-anchor ${anchor}`);
      shape = `text ${r(x)},${r(y)} '${esc(text)}'`;
    }
    return shape ? `push graphic-context\n${style.join("\n")}\n${shape}\npop graphic-context` : "";
  });
  return `viewbox 0 0 ${W} ${H}\n${body.filter(Boolean).join("\n")}\n`;
}

/**
 * Writes soak.json, soak.md, soak.svg and soak.png into `dir`; returns the summary's lines.
 * `meta`: scale, app, sampleMs, idleMs, and notes (lines added to soak.md).
 */
export async function writeReport(dir, { samples, actions, meta }) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "soak.json"), JSON.stringify({ meta, actions, samples }));
  const summary = summarize({ samples, actions });
  writeFileSync(join(dir, "soak.md"), markdown(summary, meta, samples, actions));
  const plot = plotShapes(samples, actions);
  writeFileSync(join(dir, "soak.svg"), toSvg(plot));
  writeFileSync(join(dir, "soak.mvg"), toMvg(plot));
  await run("convert", [`mvg:${join(dir, "soak.mvg")}`, join(dir, "soak.png")]);
  return summaryLines(summary, meta);
}
