import { describe, expect, it, vi } from "vitest";
import { render, screen } from "../test/render";
import userEvent from "@testing-library/user-event";
import { ErrorBoundary } from "./ErrorBoundary";

let broken = true;

function Fragile() {
  if (broken) throw new Error("cannot read properties of undefined (reading 'messages')");
  return <p>The page works</p>;
}

describe("ErrorBoundary", () => {
  it("shows a render error instead of a blank window, keeps the rest, and tries again", async () => {
    broken = true;
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    render(
      <>
        <header>Title bar</header>
        <ErrorBoundary title="This page stopped working">
          <Fragile />
        </ErrorBoundary>
      </>,
    );
    const alert = screen.getByRole("alert");
    expect(alert).toHaveTextContent("This page stopped working");
    expect(alert).toHaveTextContent("reading 'messages'");
    expect(screen.getByText("Title bar")).toBeInTheDocument();
    broken = false;
    await userEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(screen.getByText("The page works")).toBeInTheDocument();
    expect(screen.queryByRole("alert")).toBeNull();
    quiet.mockRestore();
  });

  it("renders again when the page changes, without a click", async () => {
    broken = true;
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    function Page({ path }: { path: string }) {
      return (
        <ErrorBoundary title="This page stopped working" resetOn={path}>
          <Fragile />
        </ErrorBoundary>
      );
    }
    const { rerender } = render(<Page path="/" />);
    expect(screen.getByRole("alert")).toBeInTheDocument();
    broken = false;
    rerender(<Page path="/history" />);
    expect(await screen.findByText("The page works")).toBeInTheDocument();
    quiet.mockRestore();
  });
});
