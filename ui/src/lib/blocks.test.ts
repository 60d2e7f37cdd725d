import { describe, expect, it } from "vitest";
import { splitBlocks } from "./blocks";

describe("splitBlocks", () => {
  it("splits paragraphs but keeps code fences whole", () => {
    const text = "Intro.\n\n```js\nconst a = 1;\n\nconst b = 2;\n```\n\nAfter.";
    expect(splitBlocks(text)).toEqual(["Intro.", "```js\nconst a = 1;\n\nconst b = 2;\n```", "After."]);
  });

  it("keeps an unfinished fence as one growing block", () => {
    expect(splitBlocks("Text\n\n```py\nprint(1)\n\nprint(")).toEqual(["Text", "```py\nprint(1)\n\nprint("]);
  });

  it("handles nothing", () => {
    expect(splitBlocks("")).toEqual([""]);
  });
});
