// What the soak samples of the app's process tree: memory (PSS, from proc.js), open file
// descriptors, threads, the processes below the app and which of them are zombies. Read from
// /proc, every process of the tree each time, so a child that comes and goes between samples
// is seen when it is there.
import { readFileSync, readdirSync } from "node:fs";
import { treePids, treePss } from "./proc.js";

/** One process's name, state letter (R, S, Z...), threads and open descriptors; null once gone. */
function processFacts(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    const threads = Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/^Threads:\s+(\d+)/m)?.[1] ?? 0);
    // A zombie has no descriptors left to list.
    const fds = state === "Z" ? 0 : readdirSync(`/proc/${pid}/fd`).length;
    return { pid, name, state, threads, fds };
  } catch {
    return null;
  }
}

/**
 * A sample of the tree under `root`: PSS in KiB (in all and by process name), descriptors and
 * threads summed over the tree, how many processes are below the app, how many are zombies, and
 * each process as [pid, name, state, threads, fds].
 */
export function sampleTree(root) {
  // One walk of /proc for both: the tree's pids, then each one's facts and PSS.
  const pids = treePids(root);
  const processes = pids.map(processFacts).filter(Boolean);
  const pss = treePss(root, pids);
  const sum = (key) => processes.reduce((n, p) => n + p[key], 0);
  return {
    pss: pss.total,
    pssByName: pss.byName,
    fds: sum("fds"),
    threads: sum("threads"),
    children: processes.filter((p) => p.pid !== root).length,
    zombies: processes.filter((p) => p.state === "Z").length,
    processes: processes.map((p) => [p.pid, p.name, p.state, p.threads, p.fds]),
  };
}

/**
 * Samples the tree under `root` every `everyMs` until stopped; `context()` gives what is noted
 * beside each sample (the phase, the actions done so far). Samples are kept in `samples`, each
 * with `t`, the ms since `t0`.
 */
export function startSampler(root, everyMs, t0, context) {
  const samples = [];
  const take = (extra = {}) => {
    const sample = { t: Date.now() - t0, ...context(), ...extra, ...sampleTree(root) };
    samples.push(sample);
    return sample;
  };
  const timer = setInterval(() => take(), everyMs);
  return {
    samples,
    take,
    stop() {
      clearInterval(timer);
    },
  };
}
