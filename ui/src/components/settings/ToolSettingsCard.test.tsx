import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { ToolSettings } from "../../bindings";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import { SETTINGS, healthyApp } from "../../test/fixtures";
import { ToolSettingsCard } from "./ToolSettingsCard";

function setup(present: boolean) {
  healthyApp();
  let settings = SETTINGS;
  onCommand("get_settings", () => settings);
  onCommand("set_tool_settings", ({ tools }) => (settings = { ...settings, tools: tools as ToolSettings }));
  onCommand("tools_model_status", () => ({ present, path: "/data/models/all-MiniLM-L6-v2", download_bytes: 91_334_623 }));
  render(
    <SettingsProvider>
      <ToolSettingsCard />
    </SettingsProvider>,
  );
}

const saved = () => calls.filter((c) => c.cmd === "set_tool_settings").map((c) => c.args.tools as ToolSettings);

describe("ToolSettingsCard", () => {
  it("saves K and the retriever, each edit with the copy it was made from", async () => {
    setup(true);
    expect(await screen.findByText(/Downloaded; picks tools by meaning/)).toBeInTheDocument();
    const k = screen.getByRole("spinbutton", { name: "Tools per message" });
    await userEvent.clear(k);
    await userEvent.type(k, "5");
    expect(saved()).toHaveLength(0);
    await userEvent.tab();
    expect(saved().at(-1)!.top_k).toBe(5);
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Retriever" }), "bm25");
    expect(saved().at(-1)!.retriever).toBe("bm25");

    // Rules are under Permissions, so a save here sends the rules it was drawn from as they were.
    expect(screen.queryByRole("textbox", { name: "Rule pattern" })).toBeNull();
    expect(calls.filter((c) => c.cmd === "set_tool_settings").at(-1)!.args.base).toMatchObject({ top_k: 5 });
  });

  it("downloads the embedded model with progress", async () => {
    setup(false);
    let finish: (() => void) | null = null;
    onCommand("tools_model_download", (args) => {
      const channel = args.progress as { onmessage: (p: { done: number; total: number }) => void };
      channel.onmessage({ done: 45_000_000, total: 91_334_623 });
      return new Promise((resolve) => {
        finish = () => resolve({ present: true, path: "/data/models/all-MiniLM-L6-v2", download_bytes: 0 });
      });
    });
    await userEvent.click(await screen.findByRole("button", { name: "Download (91.3 MB)" }));
    expect(await screen.findByText("45.0 MB of 91.3 MB")).toBeInTheDocument();
    expect(screen.getByRole("progressbar")).toHaveAttribute("aria-valuenow", "49");
    await waitFor(() => expect(finish).not.toBeNull());
    finish!();
    expect(await screen.findByText(/Downloaded; picks tools by meaning/)).toBeInTheDocument();
  });

  it("saves the folders, one per line, when the field is left", async () => {
    setup(true);
    const folders = await screen.findByRole("textbox", { name: "Folders" });
    await userEvent.type(folders, "  /home/me/app  {Enter}{Enter}/home/me/notes");
    expect(saved()).toHaveLength(0);
    await userEvent.tab();
    expect(saved().at(-1)!.roots).toEqual(["/home/me/app", "/home/me/notes"]);
  });
});
