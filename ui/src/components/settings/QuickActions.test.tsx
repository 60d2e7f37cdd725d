import { useState } from "react";
import { describe, expect, it } from "vitest";
import type { QuickAction } from "../../bindings";
import userEvent from "@testing-library/user-event";
import { render, screen, waitFor, within } from "../../test/render";
import { onCommand } from "../../test/tauri";
import { SettingsProvider } from "../../lib/settings";
import { SETTINGS } from "../../test/fixtures";
import { QuickActions } from "./QuickActions";
import { SelectionChip } from "../chat/SelectionChip";

const model = (id: string) => ({ id, key: id, name: id, provider: "ollama", capabilities: {}, context_length: null });

describe("the user's own quick actions", () => {
  it("are written in Settings, kept only whole, and a half-written one stays on screen", async () => {
    onCommand("get_settings", () => SETTINGS);
    onCommand("models_list", () => ({ providers: [{ provider: "ollama", models: [model("ollama:small")], error: null }], default_model: null }));
    const saved: unknown[] = [];
    // As Settings does: what is saved comes back as the actions shown.
    function Saving() {
      const [actions, setActions] = useState<QuickAction[]>([]);
      return (
        <QuickActions
          actions={actions}
          onSave={(a) => {
            saved.push(a);
            setActions(a);
          }}
        />
      );
    }
    render(
      <SettingsProvider>
        <Saving />
      </SettingsProvider>,
    );
    await userEvent.click(screen.getByRole("button", { name: "Add a quick action" }));
    const row = screen.getByRole("group", { name: "Quick action 1" });
    await userEvent.type(within(row).getByRole("textbox", { name: "Name" }), "Make it formal");
    await userEvent.tab();
    // A name without words to send is not saved, and not lost either.
    expect(saved).toEqual([]);
    expect(within(row).getByRole("textbox", { name: "Name" })).toHaveValue("Make it formal");
    await userEvent.type(within(row).getByRole("textbox", { name: "What to ask" }), "Rewrite the selected text formally.");
    await userEvent.tab();
    expect(saved.at(-1)).toEqual([{ name: "Make it formal", prompt: "Rewrite the selected text formally.", model: "" }]);
    const saved1 = screen.getByRole("group", { name: "Quick action 1" });
    await waitFor(() => expect(within(saved1).getByRole("option", { name: "ollama:small" })).toBeInTheDocument());
    await userEvent.selectOptions(within(saved1).getByRole("combobox", { name: "Model" }), "ollama:small");
    expect(saved.at(-1)).toEqual([{ name: "Make it formal", prompt: "Rewrite the selected text formally.", model: "ollama:small" }]);
  });

  it("show on the selection's chip beside the built-in ones and send their words to their model", async () => {
    const quick_actions = [{ name: "Make it formal", prompt: "Rewrite the selected text formally.", model: "ollama:small" }];
    onCommand("get_settings", () => ({ ...SETTINGS, capture: { ...SETTINGS.capture, quick_actions } }));
    const asked: unknown[] = [];
    render(
      <SettingsProvider>
        <SelectionChip selection={{ text: "hey boss", app: "Mail", window: 7 }} disabled={false} onAction={(prompt, withModel) => asked.push([prompt, withModel])} />
      </SettingsProvider>,
    );
    expect(screen.getByRole("button", { name: "Explain" })).toBeInTheDocument();
    await userEvent.click(await screen.findByRole("button", { name: "Make it formal" }));
    expect(asked).toEqual([["Rewrite the selected text formally.", "ollama:small"]]);
    await userEvent.click(screen.getByRole("button", { name: "Explain" }));
    expect(asked.at(-1)).toEqual(["Explain the selected text.", undefined]);
  });
});

