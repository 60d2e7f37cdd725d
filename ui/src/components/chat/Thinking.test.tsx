import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "../../test/render";
import { Thinking } from "./Thinking";

describe("Thinking", () => {
  it("is open while it streams alone and folds when the answer starts", () => {
    const { container, rerender } = render(<Thinking text="Let me see" live answering={false} />);
    const details = container.querySelector("details")!;
    expect(details.open).toBe(true);
    expect(screen.getByText("Thinking…")).toBeInTheDocument();
    fireEvent(details, new Event("toggle"));
    rerender(<Thinking text="Let me see" live answering />);
    expect(details.open).toBe(false);
    expect(screen.getByText("Thought (3 words)")).toBeInTheDocument();
  });

  it("stays as the reader left it", () => {
    const { container, rerender } = render(<Thinking text="Reasoning" live answering />);
    const details = container.querySelector("details")!;
    details.open = true;
    fireEvent(details, new Event("toggle"));
    rerender(<Thinking text="Reasoning more" live answering />);
    expect(details.open).toBe(true);
  });
});
