// Time to show a 100,000-character review with 1,000 file references in the real webview.
// Run by `make bench` (with the release app) or: PERCH_APP=... node bench/review_render.mjs
// under a display. Reports the UI's own measure (fetch start to DOM committed) and the time
// from the push leaving the client to all 1,000 references being in the DOM.
import { mkdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { freshDataDir, freshRuntimeDir, launch, waitFor } from "../lib/harness.js";

const RUNS = Number(process.env.RUNS ?? 5);
const REFS = 1000;

function review(repo, run) {
  const parts = [`# Large review, run ${run}\n`];
  for (let i = 0; i < REFS; i++) {
    const file = `src/module_${i % 50}.rs`;
    parts.push(`- Finding ${i}: see [\`${file}:${(i % 40) + 1}\`][] for the case that needs attention here.`);
    if (i % 25 === 0) parts.push(`\n## Section ${i / 25}\n`);
  }
  let text = parts.join("\n");
  while (text.length < 100_000) text += "\nPadding prose that a long review would carry, explaining the reasoning at length.";
  return text.slice(0, 100_000);
}

function push(socket, payload) {
  return new Promise((resolve, reject) => {
    const client = connect(socket, () => {
      client.write(JSON.stringify({ id: 1, type: "present_review", payload }) + "\n");
    });
    let data = "";
    client.on("data", (d) => {
      data += d;
      if (data.includes("\n")) {
        client.end();
        const response = JSON.parse(data);
        response.success ? resolve(response) : reject(new Error(response.error));
      }
    });
    client.on("error", reject);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const repo = freshDataDir();
for (let i = 0; i < 50; i++) {
  mkdirSync(join(repo, "src"), { recursive: true });
  writeFileSync(join(repo, `src/module_${i}.rs`), "// code\n".repeat(40));
}
const runtime = freshRuntimeDir();
const session = await launch(freshDataDir(), { XDG_RUNTIME_DIR: runtime });
const socket = join(runtime, "perch", "review.sock");
await (await session.browser.$("h1")).waitForDisplayed(); // the UI is up and listening
const uiMs = [];
const endToEnd = [];
try {
  for (let run = 1; run <= RUNS; run++) {
    const content = review(repo, run);
    const started = performance.now();
    await push(socket, { content, mode: "replace", baseUri: repo });
    await waitFor(
      () =>
        session.browser.execute(
          (title, refs) =>
            document.querySelector(".review-body h1")?.textContent === title &&
            document.querySelectorAll(".review-body button.file-ref").length === refs,
          `Large review, run ${run}`,
          REFS,
        ),
      async () => {
        const seen = await session.browser.execute(() => [
          document.querySelector(".review-body h1")?.textContent,
          document.querySelectorAll(".review-body button.file-ref").length,
          document.querySelectorAll(".review-body .file-ref").length,
          location.hash,
        ]);
        return `the review to render (seen ${JSON.stringify(seen)})`;
      },
      60_000,
    );
    endToEnd.push(performance.now() - started);
    uiMs.push(Number(await session.browser.execute(() => document.querySelector(".review-body").dataset.renderMs)));
    console.error(`run ${run}: ui ${uiMs.at(-1)} ms, push to DOM ${Math.round(endToEnd.at(-1))} ms`);
  }
} finally {
  await session.close();
}
console.log(`review render, ${REFS} references, 100,000 characters, ${RUNS} runs`);
console.log(`  UI (fetch + markdown + DOM):  median ${median(uiMs)} ms`);
console.log(`  push -> all references shown: median ${Math.round(median(endToEnd))} ms (polled every 100 ms)`);
