import { afterEach, describe, expect, it, vi } from "vitest";
import userEvent from "@testing-library/user-event";
import { render, screen } from "../../test/render";
import { Composer } from "./Composer";
import { SettingsProvider } from "../../lib/settings";
import { onCommand } from "../../test/tauri";
import { SETTINGS, healthyApp } from "../../test/fixtures";
import { resetSelection } from "../../lib/selection";
import type { ModelInfo } from "../../bindings";

const model = (id: string) => ({ id, key: id, name: id, provider: "ollama", capabilities: { vision: false, tools: true }, context_length: null }) as unknown as ModelInfo;
const FORMAL = { name: "Make it formal", prompt: "Rewrite the selected text formally.", model: "ollama:small" };

function renderWithSelection(offered: string[]) {
  healthyApp();
  onCommand("get_settings", () => ({ ...SETTINGS, capture: { ...SETTINGS.capture, quick_actions: [FORMAL] } }));
  onCommand("selection_take", () => ({ selection: { text: "hey boss, cant come", app: "Mail", window: 7 }, problem: null }));
  const onSend = vi.fn(async () => true);
  render(
    <SettingsProvider>
      <Composer
        chat="new"
        streaming={false}
        models={offered.map(model)}
        model="ollama:llama3"
        onModel={() => {}}
        usage={{ used: 0, limit: 8192 }}
        editing={null}
        onSend={onSend}
        onStop={() => {}}
        onEditLast={() => {}}
        onCancelEdit={() => {}}
      />
    </SettingsProvider>,
  );
  return onSend;
}

describe("a quick action of the user's own", () => {
  afterEach(resetSelection);

  it("is answered by its own model, with the selection, leaving the box as it was", async () => {
    const onSend = renderWithSelection(["ollama:llama3", "ollama:small"]);
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "draft kept");
    await userEvent.click(await screen.findByRole("button", { name: "Make it formal" }));
    expect(onSend).toHaveBeenCalledWith(FORMAL.prompt, [], [], [{ text: "hey boss, cant come", app: "Mail" }], "ollama:small");
    expect(screen.getByRole("textbox", { name: "Message" })).toHaveValue("draft kept");
  });

  it("falls back to the conversation's model when its own is no longer offered", async () => {
    const onSend = renderWithSelection(["ollama:llama3"]);
    await userEvent.click(await screen.findByRole("button", { name: "Make it formal" }));
    expect(onSend).toHaveBeenCalledWith(FORMAL.prompt, [], [], [{ text: "hey boss, cant come", app: "Mail" }], undefined);
  });
});
