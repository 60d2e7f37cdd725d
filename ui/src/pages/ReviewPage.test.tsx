import { describe, expect, it, vi } from "vitest";
import { act, render, screen } from "../test/render";
import userEvent from "@testing-library/user-event";
import { ReviewPage } from "./ReviewPage";
import type { ReviewDocument } from "../bindings";
import { calls, emitEvent, onCommand } from "../test/tauri";

function doc(id: number, content: string): ReviewDocument {
  return {
    id,
    content,
    base_uri: "/repo",
    mode: "replace",
    section: null,
    created_at: Date.now(),
    references: [
      { target: "src/auth.rs:45", path: "src/auth.rs", line: 45, end_line: null, problem: null },
      { target: "../etc/passwd:1", path: "../etc/passwd", line: 1, end_line: null, problem: "outside the review's folder" },
    ],
  };
}

function serve(latest: ReviewDocument | null) {
  let current = latest;
  onCommand("review_latest", () => current);
  onCommand("review_get", ({ id }) => ({ ...doc(Number(id), `# Version ${id}`) }));
  onCommand("review_versions", () =>
    current ? [{ id: current.id, title: "Auth", mode: "replace", section: null, created_at: current.created_at }, { id: 1, title: "First", mode: "replace", section: null, created_at: 0 }] : [],
  );
  onCommand("set_selection", () => null);
  return (next: ReviewDocument) => (current = next);
}

describe("ReviewPage", () => {
  it("explains how reviews arrive when there is none", async () => {
    serve(null);
    render(<ReviewPage />);
    expect(await screen.findByText("No review yet")).toBeInTheDocument();
    expect(screen.getByText("perch review push review.md")).toBeInTheDocument();
  });

  it("renders the review and opens good references through the engine", async () => {
    serve(doc(7, "# Auth\n\nLogin is in [`src/auth.rs:45`][]; not [`../etc/passwd:1`][]."));
    onCommand("review_open_reference", () => null);
    render(<ReviewPage />);
    await userEvent.click(await screen.findByRole("button", { name: "src/auth.rs:45" }));
    expect(calls.find((c) => c.cmd === "review_open_reference")?.args).toEqual({ id: 7, target: "src/auth.rs:45" });
    expect(screen.getByText("1 reference cannot be opened (outside /repo, or missing).")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "../etc/passwd:1" })).not.toBeInTheDocument();
  });

  it("says why an editor could not open the file", async () => {
    serve(doc(7, "[`src/auth.rs:45`][]"));
    onCommand("review_open_reference", () => {
      throw { kind: "external", message: "the editor \"code\" could not be started: No such file" };
    });
    render(<ReviewPage />);
    await userEvent.click(await screen.findByRole("button", { name: "src/auth.rs:45" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("could not be started");
  });

  it("follows new versions as they arrive", async () => {
    const publish = serve(doc(7, "# First take"));
    render(<ReviewPage />);
    expect(await screen.findByRole("heading", { name: "First take" })).toBeInTheDocument();
    publish(doc(8, "# Second take"));
    act(() => emitEvent("review-arrived", { id: 8 }));
    expect(await screen.findByRole("heading", { name: "Second take" })).toBeInTheDocument();
  });

  it("shows an earlier version when picked", async () => {
    serve(doc(7, "# Latest"));
    render(<ReviewPage />);
    await screen.findByRole("heading", { name: "Latest" });
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Review version" }), "1");
    expect(await screen.findByRole("heading", { name: "Version 1" })).toBeInTheDocument();
  });

  it("commits only after confirmation and shows git's output", async () => {
    serve(doc(7, "# Auth"));
    onCommand("review_commit", () => ({ success: false, output: "nothing added to commit" }));
    render(<ReviewPage />);
    await userEvent.click(await screen.findByRole("button", { name: "Commit…" }));
    expect(calls.some((c) => c.cmd === "review_commit")).toBe(false);
    expect(screen.getByRole("dialog", { name: "Confirm commit" })).toHaveTextContent("/repo");
    await userEvent.click(screen.getByRole("button", { name: "Commit" }));
    expect(await screen.findByText("git commit failed")).toBeInTheDocument();
    expect(screen.getByText("nothing added to commit")).toBeInTheDocument();
  });

  it("copies the markdown", async () => {
    serve(doc(7, "# Auth\n\nbody"));
    const writeText = vi.fn().mockResolvedValue(undefined);
    render(<ReviewPage />);
    await screen.findByRole("heading", { name: "Auth" });
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    await userEvent.click(screen.getByRole("button", { name: "Copy" }));
    expect(writeText).toHaveBeenCalledWith("# Auth\n\nbody");
    expect(screen.getByRole("button", { name: "Copied" })).toBeInTheDocument();
  });

  it("shows a remote image in a review as a placeholder naming its host, opened in the browser on a click", async () => {
    serve(doc(7, "# Auth\n\n![pixel](http://tracker.example/p.gif)"));
    onCommand("open_url", () => null);
    render(<ReviewPage />);
    const placeholder = await screen.findByRole("button", { name: "pixel · image from tracker.example" });
    expect(document.querySelector(".review img")).toBeNull();
    await userEvent.click(placeholder);
    expect(calls.find((c) => c.cmd === "open_url")?.args).toEqual({ url: "http://tracker.example/p.gif" });
  });
});
