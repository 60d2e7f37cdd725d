import { describe, expect, it } from "vitest";
import { act, render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { KnowledgeStatus } from "../../bindings";
import { calls, onCommand } from "../../test/tauri";
import { healthyApp } from "../../test/fixtures";
import { KnowledgeCard } from "./KnowledgeCard";

const NOTES = { path: "/home/u/notes", files: 120, passages: 860 };

function setup(initial: KnowledgeStatus) {
  healthyApp();
  let status = initial;
  let push: ((s: KnowledgeStatus) => void) | null = null;
  // As the engine does: every change goes out on the watch channel.
  const changed = (s: KnowledgeStatus) => {
    status = s;
    push?.(s);
  };
  onCommand("knowledge_status", () => status);
  onCommand("knowledge_watch", (args) => {
    const channel = args.updates as { onmessage: (s: KnowledgeStatus) => void };
    push = (s) => {
      status = s;
      channel.onmessage(s);
    };
    return null;
  });
  onCommand("knowledge_add_folder", ({ path }) => {
    const folder = { path: String(path).replace("~", "/home/u"), files: 0, passages: 0 };
    changed({ ...status, folders: [...status.folders, folder], indexing: { folder: folder.path, done: 0, total: 0, passages: false } });
    return folder;
  });
  onCommand("knowledge_remove_folder", ({ path }) => {
    changed({ ...status, folders: status.folders.filter((f) => f.path !== path) });
    return null;
  });
  onCommand("knowledge_set_paused", ({ paused }) => {
    changed({ ...status, paused: Boolean(paused) });
    return null;
  });
  onCommand("knowledge_reindex", () => null);
  render(<KnowledgeCard />);
  return { update: (s: KnowledgeStatus) => act(() => push!(s)) };
}

const empty: KnowledgeStatus = { folders: [], indexing: null, paused: false, words_only: false };

describe("KnowledgeCard", () => {
  it("adds a folder and shows its first index's progress as it comes", async () => {
    const { update } = setup(empty);
    const input = await screen.findByRole("textbox", { name: "Folder to add" });
    expect(screen.getByRole("button", { name: "Add folder" })).toBeDisabled();
    await userEvent.type(input, "~/projects/app{Enter}");
    expect(calls.find((c) => c.cmd === "knowledge_add_folder")?.args.path).toBe("~/projects/app");
    expect(await screen.findByText("/home/u/projects/app")).toBeInTheDocument();
    expect(input).toHaveValue("");

    await waitFor(() => expect(calls.some((c) => c.cmd === "knowledge_watch")).toBe(true));
    const folder = { path: "/home/u/projects/app", files: 40, passages: 300 };
    update({ ...empty, folders: [folder], indexing: { folder: folder.path, done: 40, total: 160, passages: false } });
    const bar = screen.getByRole("progressbar", { name: "Indexing /home/u/projects/app" });
    expect(bar).toHaveAttribute("aria-valuenow", "25");
    expect(screen.getByText("40 of 160 files")).toBeInTheDocument();
    // Words first (searchable already), then the passages' meaning.
    update({ ...empty, folders: [{ ...folder, files: 160, passages: 1200 }], indexing: { folder: "", done: 300, total: 1200, passages: true } });
    expect(screen.getByRole("progressbar", { name: "Learning what the passages mean" })).toHaveAttribute("aria-valuenow", "25");
    expect(screen.getByText("Meaning: 300 of 1200 passages")).toBeInTheDocument();
    update({ ...empty, folders: [{ ...folder, files: 160, passages: 1200 }] });
    expect(screen.queryByRole("progressbar")).toBeNull();
    expect(screen.getByText("files: 160 · passages: 1200")).toBeInTheDocument();
  });

  it("pauses and resumes, and says when searches match words only", async () => {
    setup({ ...empty, folders: [NOTES], words_only: true });
    expect(await screen.findByText(/match words only until the built-in model is downloaded/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Pause indexing" }));
    expect(calls.find((c) => c.cmd === "knowledge_set_paused")?.args.paused).toBe(true);
    expect(await screen.findByRole("button", { name: "Resume indexing" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Index again" })).toBeDisabled();
  });

  it("removes a folder only once confirmed", async () => {
    setup({ ...empty, folders: [NOTES] });
    await userEvent.click(await screen.findByRole("button", { name: "Remove /home/u/notes" }));
    expect(calls.some((c) => c.cmd === "knowledge_remove_folder")).toBe(false);
    await userEvent.click(screen.getByRole("button", { name: "Remove and forget its index" }));
    expect(calls.find((c) => c.cmd === "knowledge_remove_folder")?.args.path).toBe("/home/u/notes");
    await waitFor(() => expect(screen.queryByText("/home/u/notes")).toBeNull());
  });

  it("shows a refused folder's reason", async () => {
    setup(empty);
    onCommand("knowledge_add_folder", () => {
      throw { kind: "invalid", message: "/home/u/.ssh: is a credential store (~/.ssh), which is never indexed" };
    });
    await userEvent.type(await screen.findByRole("textbox", { name: "Folder to add" }), "~/.ssh{Enter}");
    expect(await screen.findByRole("alert")).toHaveTextContent("credential store (~/.ssh)");
  });
});
