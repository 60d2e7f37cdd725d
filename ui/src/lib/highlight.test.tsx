import { describe, expect, it } from "vitest";
import { render } from "../test/render";
import { highlight } from "./highlight";

function html(snippet: string) {
  return render(<p>{highlight(snippet)}</p>).container.innerHTML;
}

describe("highlight", () => {
  it("wraps marked words in <mark>", () => {
    expect(html("use \u0002read\u0003 to \u0002read\u0003 it")).toBe(
      "<p>use <mark>read</mark> to <mark>read</mark> it</p>",
    );
  });

  it("leaves unmarked text alone and tolerates a missing end marker", () => {
    expect(html("plain text")).toBe("<p>plain text</p>");
    expect(html("cut \u0002off")).toBe("<p>cut <mark>off</mark></p>");
  });

  it("never interprets text as HTML", () => {
    const out = html("\u0002<img src=x onerror=alert(1)>\u0003");
    expect(out).not.toContain("<img");
    expect(out).toContain("&lt;img");
  });
});
