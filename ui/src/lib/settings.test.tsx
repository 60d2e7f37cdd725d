import { describe, expect, it } from "vitest";
import { act, render, screen } from "../test/render";
import { SettingsProvider, savingError, useSettings } from "./settings";
import { useModels } from "./models";
import { calls, onCommand } from "../test/tauri";
import { SETTINGS } from "../test/fixtures";

function ModelCount() {
  const { offered, loading } = useModels();
  const { setTheme, setModels, settings } = useSettings();
  return (
    <>
      <p>{loading ? "loading" : `${offered.length} models`}</p>
      <button type="button" onClick={() => void setTheme("dark")}>Dark</button>
      <button type="button" onClick={() => settings && void setModels({ ...settings.models, enabled: ["ollama:a"] })}>
        Only a
      </button>
    </>
  );
}

describe("savingError", () => {
  it("keeps the why of a value the engine could not read, without the command's words", () => {
    expect(savingError({ kind: "invalid", message: 'invalid args `providers` for command `set_provider_settings`: "not a url" is not an http:// or https:// URL' })).toBe(
      'That value cannot be used: "not a url" is not an http:// or https:// URL',
    );
    expect(savingError({ kind: "storage", message: "the disk is full" })).toBe("the disk is full");
  });
});

describe("the settings context", () => {
  it("does not list the models again when an unrelated setting is saved, but does when the model choice changes", async () => {
    let saved = { ...SETTINGS };
    onCommand("get_settings", () => saved);
    onCommand("set_theme", (args) => (saved = { ...saved, theme: args.theme as typeof saved.theme }));
    onCommand("set_model_settings", (args) => (saved = { ...saved, models: args.models as typeof saved.models }));
    const models = (id: string) => ({ id, key: id, name: id, provider: "ollama", capabilities: {}, context_length: null });
    onCommand("models_list", () => ({ providers: [{ provider: "ollama", models: [models("ollama:a"), models("ollama:b")], error: null }], default_model: null }));
    render(
      <SettingsProvider>
        <ModelCount />
      </SettingsProvider>,
    );
    expect(await screen.findByText("2 models")).toBeInTheDocument();
    const listed = () => calls.filter((c) => c.cmd === "models_list").length;
    const before = listed();
    await act(async () => screen.getByRole("button", { name: "Dark" }).click());
    await expect.poll(() => document.documentElement.dataset.theme).toBe("dark");
    expect(listed()).toBe(before);
    await act(async () => screen.getByRole("button", { name: "Only a" }).click());
    expect(await screen.findByText("1 models")).toBeInTheDocument();
    expect(listed()).toBe(before + 1);
  });
});
