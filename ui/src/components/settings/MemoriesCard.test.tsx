import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { MemoryRouter } from "react-router";
import type { Memory, Settings } from "../../bindings";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import { SETTINGS, healthyApp } from "../../test/fixtures";
import { MemoriesCard } from "./MemoriesCard";

const memory = (id: number, text: string, conversation_id: string | null = null): Memory => ({
  id,
  text,
  created_at: Date.now(),
  updated_at: Date.now(),
  conversation_id,
});

/** The card over an engine that keeps `initial` (and refuses an empty memory, as the store does). */
function setup(initial: Memory[]) {
  healthyApp();
  let kept = [...initial];
  onCommand("memories_list", () => kept);
  onCommand("memories_add", ({ text }) => {
    const m = memory(kept.length + 10, String(text));
    kept = [m, ...kept];
    return m;
  });
  onCommand("memories_edit", ({ id, text }) => {
    if (!String(text).trim()) throw { kind: "invalid", message: "a memory cannot be empty" };
    kept = kept.map((m) => (m.id === id ? { ...m, text: String(text) } : m));
    return kept.find((m) => m.id === id);
  });
  onCommand("memories_forget", ({ id }) => {
    kept = kept.filter((m) => m.id !== id);
    return null;
  });
  onCommand("set_memory_settings", ({ memories }) => ({ ...SETTINGS, memories: memories as Settings["memories"] }));
  render(
    <MemoryRouter>
      <SettingsProvider>
        <MemoriesCard />
      </SettingsProvider>
    </MemoryRouter>,
  );
}

describe("MemoriesCard", () => {
  it("lists memories with where they came from, adds, edits and forgets them", async () => {
    setup([memory(1, "The user's team deploys on Fridays", "conv-1")]);
    const list = await screen.findByRole("list", { name: "Memories" });
    expect(within(list).getByText("The user's team deploys on Fridays")).toBeInTheDocument();
    expect(within(list).getByText(/kept from a chat/)).toBeInTheDocument();

    await userEvent.type(screen.getByRole("textbox", { name: "New memory" }), "I write Rust at work{Enter}");
    expect(calls.find((c) => c.cmd === "memories_add")?.args.text).toBe("I write Rust at work");
    expect(await within(list).findByText("I write Rust at work")).toBeInTheDocument();
    expect(within(list).getByText(/added by you/)).toBeInTheDocument();
    expect(screen.getByRole("textbox", { name: "New memory" })).toHaveValue("");

    await userEvent.click(screen.getByRole("button", { name: "Edit The user's team deploys on Fridays" }));
    const box = screen.getByRole("textbox", { name: "Edit memory" });
    expect(box).toHaveFocus();
    await userEvent.clear(box);
    await userEvent.type(box, "The team deploys on Thursdays{Enter}");
    expect(await within(list).findByText("The team deploys on Thursdays")).toBeInTheDocument();

    await userEvent.click(screen.getByRole("button", { name: "Forget The team deploys on Thursdays" }));
    await userEvent.click(screen.getByRole("button", { name: "Forget it" }));
    await waitFor(() => expect(within(list).queryByText("The team deploys on Thursdays")).toBeNull());
    expect(calls.find((c) => c.cmd === "memories_forget")?.args.id).toBe(1);
  });

  it("keeps an edit that was refused in the box, with the reason, and Escape leaves it unchanged", async () => {
    setup([memory(1, "Prefers tabs")]);
    await userEvent.click(await screen.findByRole("button", { name: "Edit Prefers tabs" }));
    const box = screen.getByRole("textbox", { name: "Edit memory" });
    await userEvent.clear(box);
    await userEvent.type(box, "   ");
    expect(screen.getByRole("button", { name: "Save" })).toBeDisabled();
    await userEvent.type(box, "{Enter}");
    expect(await screen.findByRole("alert")).toHaveTextContent("a memory cannot be empty");
    expect(screen.getByRole("textbox", { name: "Edit memory" })).toHaveValue("   ");
    await userEvent.type(box, "{Escape}");
    expect(screen.getByText("Prefers tabs")).toBeInTheDocument();
  });

  it("turns memories off, and on for models off this computer, as settings", async () => {
    setup([]);
    expect(await screen.findByText(/No memories yet/)).toBeInTheDocument();
    const cloud = screen.getByRole("checkbox", { name: /models that do not run on this computer/ });
    await waitFor(() => expect(cloud).toBeEnabled());
    expect(cloud).not.toBeChecked();
    await userEvent.click(cloud);
    await waitFor(() => expect(calls.some((c) => c.cmd === "set_memory_settings")).toBe(true));
    expect(calls.find((c) => c.cmd === "set_memory_settings")?.args.memories).toEqual({ enabled: true, cloud: true });
    await userEvent.click(screen.getByRole("checkbox", { name: /Use memories/ }));
    expect(calls.filter((c) => c.cmd === "set_memory_settings").at(-1)?.args.memories).toEqual({ enabled: false, cloud: true });
    // Off, the cloud choice is kept but cannot be changed.
    await waitFor(() => expect(cloud).toBeDisabled());
  });
});
