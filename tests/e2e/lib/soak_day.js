// The soak's working day: which actions, how many, in what order, and what the model says.
// Deterministic (a seeded generator), so two runs of one scale do the same day.

/** The day at SOAK_SCALE 1: issue 45's counts. */
export const FULL_DAY = {
  chat: 200,
  "dictation (Perch)": 50,
  "dictation (other app)": 20,
  screenshot: 50,
  "hide/summon": 100,
  "mini mode": 20,
  "tool call": 30,
  terminal: 10,
  "MCP app": 5,
  "settings edit": 6,
  "history search": 10,
  "history export": 5,
};

/** A generator of numbers in [0, 1) from a seed (mulberry32). */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The day's actions in order: each kind's count scaled (at least one of each kind asked for),
 * spread evenly over the day with some jitter, so kinds interleave as they do in use rather
 * than coming in blocks. The day opens with a chat turn: searches and exports need a
 * conversation. Each entry is { kind, n } (n counts from 0 within its kind).
 */
export function schedule(scale, kinds = Object.keys(FULL_DAY), seed = 45) {
  const random = seeded(seed);
  const day = [];
  for (const kind of kinds) {
    const count = Math.max(1, Math.round(FULL_DAY[kind] * scale));
    for (let n = 0; n < count; n++) day.push({ kind, n, at: (n + 0.5 + (random() - 0.5) * 0.8) / count });
  }
  day.sort((a, b) => a.at - b.at);
  const firstChat = day.findIndex((a) => a.kind === "chat");
  if (firstChat > 0) day.unshift(...day.splice(firstChat, 1));
  return day.map(({ kind, n }) => ({ kind, n }));
}

export const TOPICS = ["kestrel", "lighthouse", "marmalade", "quasar", "tundra", "origami", "saffron", "glacier", "harbour", "meridian", "juniper", "obsidian"];

const PROSE = (
  "the function reads each record once and keeps only what the next step needs so memory stays flat " +
  "while the loop runs we check the bound before we allocate and return early when the input is empty " +
  "this matters on a laptop that stays on all day because a small leak per call adds up over hours " +
  "a cache helps only when the same key comes back often otherwise it is just another place to grow " +
  "measure first then change one thing at a time and measure again with the same load and the same data"
).split(" ");

function sentence(random, words) {
  const out = Array.from({ length: words }, () => PROSE[Math.floor(random() * PROSE.length)]);
  out[0] = out[0][0].toUpperCase() + out[0].slice(1);
  return `${out.join(" ")}.`;
}

function codeBlock(random, lines) {
  const body = Array.from({ length: lines }, (_, i) => `    let step_${i} = records.iter().filter(|r| r.size > ${Math.floor(random() * 4096)}).count();`);
  return ["```rust", "fn summarise(records: &[Record]) -> usize {", ...body, "    records.len()", "}", "```"].join("\n");
}

/**
 * A long answer for chat turn `k` about `topic`, ending with a marker that tells it apart:
 * 250-600 words of prose, a code block in every second answer, thinking before every third,
 * display math in every fifth. Returns the fake model's script and the marker.
 */
export function longAnswer(k, topic, tokenDelayMs) {
  const random = seeded(1000 + k);
  const parts = [`About the ${topic}: ${sentence(random, 12)}`];
  const paragraphs = 3 + Math.floor(random() * 5);
  for (let p = 0; p < paragraphs; p++) {
    parts.push(Array.from({ length: 4 + Math.floor(random() * 4) }, () => sentence(random, 10 + Math.floor(random() * 10))).join(" "));
    if (p === 1 && k % 2 === 0) parts.push(codeBlock(random, 20 + Math.floor(random() * 40)));
    if (p === 2 && k % 5 === 0) parts.push(`$$\\sum_{i=1}^{${k + 2}} i = \\frac{n(n+1)}{2}$$`);
  }
  const marker = `(answer ${k})`;
  parts.push(`That is all for the ${topic} ${marker}`);
  const text = parts.join("\n\n");
  const steps = [];
  if (k % 3 === 0) steps.push(...pieces(`Thinking about the ${topic}. ${sentence(random, 60)} ${sentence(random, 40)}`).map((t) => ({ type: "thinking", text: t })));
  const tokens = pieces(text);
  steps.push(...tokens.map((t) => ({ type: "text", text: t })), { type: "usage", input: 40 + k, output: tokens.length }, { type: "finish" });
  return { script: { steps, token_delay_ms: tokenDelayMs }, marker };
}

/** Word-sized pieces that keep their trailing space, as a model's tokens come. */
function pieces(text) {
  return text.split(/(?<= )/);
}
