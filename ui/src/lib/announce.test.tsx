import { describe, expect, it } from "vitest";
import { render, screen } from "../test/render";
import { Announcer } from "../components/Announcer";
import { sentenceEnd, spoken, useAnnouncedAnswer } from "./announce";

function Stream({ text, saved }: { text: string | null; saved: { id: number; text: string } | null }) {
  useAnnouncedAnswer(text, saved);
  return null;
}

describe("announcements", () => {
  it("finds where finished sentences end", () => {
    expect(sentenceEnd("Pi is 3.14 and", 0)).toBe(0);
    expect(sentenceEnd("One. Two", 0)).toBe(4);
    expect(sentenceEnd("One. Two! Three", 0)).toBe(9);
    expect(sentenceEnd("One. Two! Three", 9)).toBe(9);
    expect(sentenceEnd("- a\n- b", 0)).toBe(4);
  });

  it("reads markdown as words", () => {
    expect(spoken("**Water** and `light`, see [the guide](https://x.org).")).toBe("Water and light, see the guide.");
    expect(spoken("```rust\nfn main() {}\n```")).toBe("fn main() {}");
  });

  it("tells a streamed answer a sentence at a time, then the rest once it is saved", () => {
    const first = { id: 1, text: "An older answer." };
    const view = (stream: string | null, saved: { id: number; text: string } | null) => (
      <>
        <Announcer />
        <Stream text={stream} saved={saved} />
      </>
    );
    const { rerender } = render(view(null, first));
    const region = screen.getByRole("status");
    const said = () => [...region.querySelectorAll("p")].map((p) => p.textContent);
    const before = said();
    rerender(view("The sum", first));
    expect(said()).toEqual(before);
    rerender(view("The sum is **5**. It is odd", first));
    expect(said().slice(before.length)).toEqual(["The sum is 5."]);
    // The stream ends before the saved answer is there: nothing yet, and not the old one.
    rerender(view(null, first));
    expect(said().slice(before.length)).toEqual(["The sum is 5."]);
    rerender(view(null, { id: 2, text: "The sum is **5**. It is odd, and prime." }));
    expect(said().slice(-2)).toEqual(["The sum is 5.", "It is odd, and prime."]);
  });

  it("reads an answer saved before its stream was drawn", () => {
    const view = (stream: string | null, saved: { id: number; text: string } | null) => (
      <>
        <Announcer />
        <Stream text={stream} saved={saved} />
      </>
    );
    const { rerender } = render(view(null, null));
    rerender(view("", null));
    rerender(view(null, { id: 3, text: "Done in one go." }));
    expect(screen.getByRole("status").lastElementChild).toHaveTextContent("Done in one go.");
  });
});
