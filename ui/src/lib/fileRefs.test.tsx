import { describe, expect, it } from "vitest";
import { render } from "../test/render";
import { Markdown } from "../components/Markdown";
import vectors from "../../../tests/fixtures/file_references.json";

// The same vectors the engine's reference finder is tested against (review::references), so
// the buttons the UI draws are the references the engine checks.
describe("file references: the vectors shared with the engine", () => {
  it.each(vectors.cases)("$markdown", ({ markdown, targets }) => {
    const { container } = render(<Markdown markdown={markdown} references={new Map()} onOpenReference={() => {}} />);
    const found = [...container.querySelectorAll("[data-ref]")].map((el) => el.getAttribute("data-ref"));
    expect([...new Set(found)]).toEqual(targets);
  });
});
