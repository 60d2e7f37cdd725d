// The app's processes for the benchmarks: its pid, and PSS (from /proc/PID/smaps_rollup) summed
// over its process tree (the app, WebKit's processes, MCP servers and other sidecars).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const pids = () => readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);

/** The running app's pid (the process whose program is PERCH_APP). */
export function appPid() {
  for (const pid of pids()) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] === process.env.PERCH_APP) return pid;
    } catch {
      // gone meanwhile
    }
  }
  throw new Error("the app process was not found");
}

/** Each process's children, by parent pid. */
function childrenByParent() {
  const children = new Map();
  for (const pid of pids()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** The pid of the app's page process (WebKit's web process), or null while it has none. */
export function pageProcess(app) {
  for (const pid of childrenByParent().get(app) ?? []) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("WebKitWebProcess")) return pid;
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** The pids of `root` and every process below it, `root` first. */
export function treePids(root) {
  const children = childrenByParent();
  const tree = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    tree.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** PSS in KiB of `root` and every process below it (or of `pids`, a tree already walked), in
 * all and by process name. */
export function treePss(root, pids = treePids(root)) {
  let total = 0;
  const byName = {};
  for (const pid of pids) {
    try {
      const m = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
      const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      const kib = m ? Number(m[1]) : 0;
      total += kib;
      byName[name] = (byName[name] ?? 0) + kib;
    } catch {
      // gone meanwhile
    }
  }
  return { total, byName };
}

/** How many pages have rendered in the app on `dataDir` (each reports its first paint over the
 * IPC, and the app logs it). WebDriver cannot follow a page into a new web process. */
export function firstPaints(dataDir) {
  return appLog(dataDir).split("first paint").length - 1;
}

/** The app's log on `dataDir`, all of its files. */
export function appLog(dataDir) {
  const logs = join(dataDir, "logs");
  return readdirSync(logs)
    .filter((f) => f.startsWith("perch."))
    .map((f) => readFileSync(join(logs, f), "utf8"))
    .join("");
}
