import { describe, expect, it } from "vitest";
import { HELD_OUTPUT, HIGH_WATER, LOW_WATER, PanelWriter, TailBuffer, type Writable } from "./terminalFlow";

/** A terminal that parses only when told to, like xterm.js falling behind a flood. */
class SlowTerm implements Writable {
  written: string[] = [];
  private callbacks: (() => void)[] = [];
  write(data: string, callback?: () => void): void {
    this.written.push(data);
    if (callback) this.callbacks.push(callback);
  }
  /** Parses everything handed over so far (which may hand over more). */
  parseAll(): void {
    while (this.callbacks.length > 0) this.callbacks.shift()!();
  }
  get text(): string {
    return this.written.join("");
  }
}

const line = (n: number) => `line ${String(n).padStart(6, "0")} ${"x".repeat(60)}\r\n`;

describe("TailBuffer", () => {
  it("keeps the last characters of a stream", () => {
    const tail = new TailBuffer(10);
    expect(tail.text()).toBe("");
    tail.push("abcdef");
    tail.push("ghijkl");
    tail.push("mn");
    expect(tail.text()).toBe("efghijklmn");
    tail.clear();
    expect(tail.text()).toBe("");
  });

  it("does not grow with the stream", () => {
    const tail = new TailBuffer(1000);
    for (let i = 0; i < 10_000; i++) tail.push(line(i));
    expect(tail.text()).toHaveLength(1000);
    expect(tail.text().endsWith(line(9999))).toBe(true);
    // Only the chunks covering the limit are kept, not the 760 KB pushed.
    expect((tail as unknown as { chunks: string[] }).chunks.length).toBeLessThanOrEqual(1000 / line(0).length + 2);
  });
});

describe("PanelWriter", () => {
  it("writes straight through while the terminal keeps up", () => {
    const term = new SlowTerm();
    const out = new PanelWriter(term);
    out.always("$ ls\r\n");
    out.output("a\r\n");
    out.output("b\r\n");
    out.always("[exit 0]\r\n");
    expect(term.text).toBe("$ ls\r\na\r\nb\r\n[exit 0]\r\n");
  });

  it("holds output back while the terminal is behind, and bounds what it holds", () => {
    const term = new SlowTerm();
    const out = new PanelWriter(term);
    out.always("$ flood\r\n");
    // 50 MB of lines while the terminal parses nothing.
    const lines = Math.ceil(50_000_000 / line(0).length);
    let chunk = "";
    for (let i = 0; i < lines; i++) {
      chunk += line(i);
      if (chunk.length >= 64 * 1024) {
        out.output(chunk);
        chunk = "";
      }
    }
    out.output(chunk);
    out.always("[exit 0]\r\n");
    // Handed to the terminal: no more than the high-water mark and one chunk.
    expect(term.text.length).toBeLessThan(HIGH_WATER + 64 * 1024);
    // The rest waits as at most HELD_OUTPUT characters, whatever the flood's size.
    const held = (out as unknown as { held: { text: string }[] }).held;
    expect(held.reduce((n, s) => n + s.text.length, 0)).toBeLessThanOrEqual(HELD_OUTPUT + 64);

    term.parseAll();
    const shown = term.text;
    // In order: the header, the flood's start, a note for what was skipped, its newest lines
    // whole, then the footer.
    expect(shown.startsWith("$ flood\r\nline 000000 ")).toBe(true);
    expect(shown.endsWith(line(lines - 1) + "[exit 0]\r\n")).toBe(true);
    // eslint-disable-next-line no-control-regex -- the note is wrapped in escape sequences
    const note = shown.match(/\x1b\[0m\r\n\x1b\[90m\[(\d+\.\d) MB of output skipped: it came faster than the panel can show\]\x1b\[0m\r\n/);
    expect(note).not.toBeNull();
    // The newest lines start whole after the note.
    expect(shown.slice(note!.index! + note![0].length)).toMatch(/^line \d{6} x{60}\r\n/);
    // What was drawn and what the note says was skipped add up to the whole flood (the note
    // rounds to 0.1 MB).
    const drawn = shown.length - "$ flood\r\n".length - "[exit 0]\r\n".length - note![0].length;
    const skipped = Number(note![1]) * 1_000_000;
    expect(Math.abs(drawn + skipped - lines * line(0).length)).toBeLessThanOrEqual(50_000);
  });

  it("keeps every header and footer while dropping output", () => {
    const term = new SlowTerm();
    const out = new PanelWriter(term);
    out.output("x".repeat(HIGH_WATER));
    for (let job = 1; job <= 3; job++) {
      out.always(`$ job ${job}\r\n`);
      for (let i = 0; i < 40; i++) out.output(`${job}:` + "y".repeat(64 * 1024 - 4) + "\r\n");
      out.always(`[job ${job} done]\r\n`);
    }
    term.parseAll();
    const shown = term.text;
    for (let job = 1; job <= 3; job++) {
      expect(shown.indexOf(`$ job ${job}\r\n`)).toBeLessThan(shown.indexOf(`[job ${job} done]\r\n`));
    }
    expect(shown.indexOf("[job 1 done]")).toBeLessThan(shown.indexOf("$ job 2"));
    expect(shown.indexOf("[job 2 done]")).toBeLessThan(shown.indexOf("$ job 3"));
    // The notes stand where output was dropped: after the header of the job it came from.
    const firstNote = shown.indexOf("of output skipped");
    expect(firstNote).toBeGreaterThan(shown.indexOf("$ job 1"));
    expect(shown.endsWith("[job 3 done]\r\n")).toBe(true);
  });

  it("writes held output again once the terminal has caught up below the low-water mark", () => {
    const term = new SlowTerm();
    const out = new PanelWriter(term);
    out.output("a".repeat(HIGH_WATER));
    out.output("b".repeat(LOW_WATER));
    expect(term.text).not.toContain("b");
    term.parseAll();
    expect(term.text).toContain("b".repeat(LOW_WATER));
    expect(term.text).not.toContain("skipped");
  });

  it("writes nothing after it is closed", () => {
    const term = new SlowTerm();
    const out = new PanelWriter(term);
    out.output("a".repeat(HIGH_WATER));
    out.output("held");
    out.close();
    out.always("late");
    term.parseAll();
    expect(term.text).toBe("a".repeat(HIGH_WATER));
  });
});
