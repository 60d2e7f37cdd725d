// Flow control between the terminal's output and what draws it. The app already sends the
// page at most 2.5 MB/s per command (perch_core::terminal::feed); xterm.js on a slow machine
// can still parse slower than that, and writing everything would queue it all in the page.
// Since the panel keeps only its last 10,000 lines anyway, output that arrives while the
// panel is behind is held as a bounded tail, and what falls out of it is named in one line.
import { plural, t } from "@lingui/core/macro";
import { formatNumber } from "./format";

/** The last `limit` characters of a stream, kept as chunks so appending costs no copy. */
export class TailBuffer {
  private chunks: string[] = [];
  private length = 0;

  constructor(private readonly limit: number) {}

  push(text: string): void {
    if (!text) return;
    this.chunks.push(text);
    this.length += text.length;
    // Drop whole chunks while what stays still covers the limit; the rest is cut on read.
    while (this.chunks.length > 1 && this.length - this.chunks[0].length >= this.limit) {
      this.length -= this.chunks.shift()!.length;
    }
  }

  /** The kept text, at most `limit` characters. */
  text(): string {
    const all = this.chunks.join("");
    return all.length > this.limit ? all.slice(all.length - this.limit) : all;
  }

  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}

/** What PanelWriter needs of xterm.js's Terminal. */
export interface Writable {
  write(data: string, callback?: () => void): void;
}

/** Characters handed to xterm.js and not yet parsed above which output is held back. */
export const HIGH_WATER = 512 * 1024;
/** Characters still being parsed below which held output is written again. */
export const LOW_WATER = 128 * 1024;
/** Output held while the panel is behind: about 13,000 lines of 80 columns, more than the
 * panel's scrollback, so nothing the panel could still show is lost. */
export const HELD_OUTPUT = 1024 * 1024;

interface Segment {
  text: string;
  /** Output may be dropped from the front of what is held; headers and footers never are. */
  output: boolean;
  /** Set on the marker standing where dropped output was: how many characters. */
  skipped?: number;
}

/** How much output was skipped, in the UI's language: "1.2 MB", "48 KB", "512 characters". */
function describe(chars: number): string {
  if (chars >= 1_000_000) {
    const size = formatNumber(chars / 1_000_000, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
    return t({ message: `${size} MB`, comment: "an amount of terminal output, in megabytes (of characters)" });
  }
  if (chars >= 1_000) {
    const size = formatNumber(Math.round(chars / 1_000));
    return t({ message: `${size} KB`, comment: "an amount of terminal output, in kilobytes (of characters)" });
  }
  return plural(chars, { one: "# character", other: "# characters" });
}

/** The line standing in for output the panel skipped. */
export function skippedNote(chars: number): string {
  const amount = describe(chars);
  const note = t`${amount} of output skipped: it came faster than the panel can show`;
  // eslint-disable-next-line lingui/no-unlocalized-strings -- escape sequences: a grey line of its own
  return `\x1b[0m\r\n\x1b[90m[${note}]\x1b[0m\r\n`;
}

/** Writes to a terminal in order, holding output back while the terminal is behind and keeping
 * only the newest HELD_OUTPUT characters of it. */
export class PanelWriter {
  private inFlight = 0;
  private held: Segment[] = [];
  private heldOutput = 0;
  private closed = false;

  constructor(private readonly term: Writable) {}

  /** Command output: may be skipped in part when it comes faster than the panel draws. */
  output(text: string): void {
    this.add({ text, output: true });
  }

  /** A header, a footer or a replay: always written. */
  always(text: string): void {
    this.add({ text, output: false });
  }

  /** Stops writing (the panel is going away). */
  close(): void {
    this.closed = true;
    this.held = [];
  }

  private add(segment: Segment): void {
    if (this.closed || !segment.text) return;
    if (this.held.length === 0 && this.inFlight < HIGH_WATER) {
      this.send(segment.text);
      return;
    }
    this.held.push(segment);
    if (segment.output) {
      this.heldOutput += segment.text.length;
      this.trim();
    }
  }

  /** Drops the oldest held output beyond HELD_OUTPUT, leaving a marker where it was. */
  private trim(): void {
    let i = 0;
    while (this.heldOutput > HELD_OUTPUT && i < this.held.length) {
      const segment = this.held[i];
      if (!segment.output) {
        i++;
        continue;
      }
      const excess = this.heldOutput - HELD_OUTPUT;
      // Cut after a line break where there is one, so the kept part starts a line (and not
      // inside an escape sequence).
      const newline = segment.text.indexOf("\n", excess);
      const cut = segment.text.length <= excess ? segment.text.length : newline >= 0 ? newline + 1 : excess;
      this.heldOutput -= cut;
      const before = this.held[i - 1];
      if (before?.skipped !== undefined) before.skipped += cut;
      else this.held.splice(i++, 0, { text: "", output: false, skipped: cut });
      if (cut === segment.text.length) this.held.splice(i, 1);
      else segment.text = segment.text.slice(cut);
    }
  }

  private send(text: string): void {
    this.inFlight += text.length;
    this.term.write(text, () => this.parsed(text.length));
  }

  private parsed(chars: number): void {
    this.inFlight -= chars;
    if (this.closed || this.inFlight > LOW_WATER) return;
    while (this.held.length > 0 && this.inFlight < HIGH_WATER) {
      const segment = this.held.shift()!;
      if (segment.output) this.heldOutput -= segment.text.length;
      this.send(segment.skipped === undefined ? segment.text : skippedNote(segment.skipped));
    }
  }
}
