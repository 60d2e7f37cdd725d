import { describe, expect, it } from "vitest";
import { fileInputName, hashQuery } from "./knowledgePicker";

const at = (text: string) => hashQuery(text, text.length);

describe("the # picker's trigger", () => {
  it("takes the words after a # up to the cursor, spaces included, on one line", () => {
    expect(at("#retry")).toEqual({ start: 0, query: "retry" });
    expect(at("what did we say in #retry policy")).toEqual({ start: 19, query: "retry policy" });
    expect(at("first line\n#token refresh")).toEqual({ start: 11, query: "token refresh" });
    expect(hashQuery("see #retry policy later", 17)).toEqual({ start: 4, query: "retry policy" });
  });

  it("opens nothing for a heading, an issue number, a # inside a word or one on an earlier line", () => {
    expect(at("# Heading")).toBeNull();
    expect(at("fixed in #12")).toBeNull();
    expect(at("C#")).toBeNull();
    expect(at("a#b")).toBeNull();
    expect(at("#retry\nand then")).toBeNull();
    expect(at("no hash here")).toBeNull();
  });

  it("stops being a search past 80 characters", () => {
    expect(at(`#${"a".repeat(80)}`)).not.toBeNull();
    expect(at(`#${"a".repeat(81)}`)).toBeNull();
  });
});

describe("a question's file while its answer is written", () => {
  it("is named as the engine names it once saved: a passage by its lines, a PDF's by its page", () => {
    expect(fileInputName({ path: "/p/a.rs" })).toBe("/p/a.rs");
    expect(fileInputName({ path: "/p/a.rs", lines: [6, 8] })).toBe("/p/a.rs:6-8");
    expect(fileInputName({ path: "/p/a.rs", lines: [6, 6] })).toBe("/p/a.rs:6");
    expect(fileInputName({ path: "/p/Raft.PDF", lines: [2, 2] })).toBe("/p/Raft.PDF, page 2");
  });
});
