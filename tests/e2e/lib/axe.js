// axe-core run inside the real app's webview over WebDriver: the page Perch shows, in the
// state it is in, judged against WCAG 2.2 A and AA. WebDriver's script evaluation is not the
// page's own script, so the page's CSP (script-src 'self') does not stand in the way.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

/**
 * The serious and critical violations on the page (or inside `selector`), each as
 * `rule: help (target, target...)` lines, so a failing test says what to fix and where.
 */
export async function axeViolations(browser, selector = "body") {
  const injected = await browser.execute(() => typeof window.axe === "object");
  if (!injected) await browser.execute(AXE_SOURCE);
  const results = await browser.executeAsync(
    (scope, tags, done) => {
      window.axe
        .run(document.querySelector(scope) ?? document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] })
        .then((r) => done(JSON.stringify(r.violations)))
        .catch((e) => done(JSON.stringify([{ id: "axe-error", impact: "critical", help: String(e), nodes: [] }])));
    },
    selector,
    TAGS,
  );
  return JSON.parse(results)
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 6).join(", ")})`);
}
