import { describe, expect, it } from "vitest";
import { render } from "../test/render";
import { WithCode } from "./InlineCode";

describe("WithCode", () => {
  it("shows commands in backticks as code, and leaves an unpaired backtick as typed", () => {
    const { container, rerender } = render(<WithCode text="Start it with `ollama serve`, then `perch models`." />);
    expect(container.textContent).toBe("Start it with ollama serve, then perch models.");
    expect([...container.querySelectorAll("code")].map((c) => c.textContent)).toEqual(["ollama serve", "perch models"]);
    rerender(<WithCode text="a ` alone" />);
    expect(container.textContent).toBe("a ` alone");
    expect(container.querySelector("code")).toBeNull();
  });
});
