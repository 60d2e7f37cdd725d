import { describe, expect, it } from "vitest";
import { render, screen, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { ModelsSettings } from "./ModelsSettings";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import { SETTINGS, healthyApp } from "../../test/fixtures";
import type { Settings } from "../../bindings";

function setup(endpoints: unknown[] = []) {
  healthyApp();
  onCommand("provider_endpoints", () => endpoints);
  let settings: Settings = SETTINGS;
  onCommand("get_settings", () => settings);
  onCommand("set_provider_settings", ({ providers }) => (settings = { ...settings, providers: providers as Settings["providers"] }));
  onCommand("set_model_settings", ({ models }) => (settings = { ...settings, models: models as Settings["models"] }));
  let stored: string | null = null;
  onCommand("keys_overview", () => ({
    backend: { source: "file", warning: "No OS keyring is available, so API keys are kept encrypted in /data/keys.enc." },
    keys: [
      { provider: "openai", source: stored ? "file" : null, masked: stored },
      { provider: "anthropic", source: "env", masked: "sk-…9999" },
    ],
  }));
  onCommand("key_set", ({ key }) => {
    stored = `${String(key).slice(0, 3)}…${String(key).slice(-4)}`;
    return key === "sk-good-key-123456789"
      ? { works: true, message: "The key works (3 models)." }
      : { works: false, message: "the key for openai was rejected; check it in Settings -> Models" };
  });
  onCommand("key_delete", () => {
    stored = null;
    return null;
  });
  onCommand("models_list", () => ({
    providers: [
      {
        provider: "ollama",
        error: null,
        models: [
          { id: "ollama:a", key: "ollama:registry.ollama.ai/library/a:latest", provider: "ollama", name: "a", context_length: 8192, capabilities: { vision: true, tools: true, thinking: false } },
          { id: "ollama:b", key: "ollama:registry.ollama.ai/library/b:latest", provider: "ollama", name: "b", context_length: 8192, capabilities: { vision: false, tools: false, thinking: true } },
        ],
      },
    ],
    default_model: "ollama:a",
  }));
  onCommand("prices", () => [{ model: "openai:gpt-4.1", input: 2, output: 8 }]);
  render(
    <SettingsProvider>
      <ModelsSettings />
    </SettingsProvider>,
  );
}

describe("ModelsSettings", () => {
  it("saves a key, says whether it works, shows only the masked form, and warns about the file store", async () => {
    setup();
    expect(await screen.findByRole("note")).toHaveTextContent("No OS keyring");
    expect(screen.getByText("sk-…9999 (environment)")).toBeInTheDocument();
    const field = screen.getByLabelText("openai key");
    expect(field).toHaveAttribute("type", "password");
    await userEvent.type(field, "sk-bad-key-000000000{Enter}");
    expect(await screen.findByText(/the key for openai was rejected/)).toBeInTheDocument();
    expect(field).toHaveValue("");
    await userEvent.type(field, "sk-good-key-123456789");
    await userEvent.click(screen.getAllByRole("button", { name: "Save" })[0]);
    expect(await screen.findByText("The key works (3 models).")).toBeInTheDocument();
    expect(await screen.findByText("sk-…6789")).toBeInTheDocument();
    expect(document.body.textContent).not.toContain("sk-good-key-123456789");
    await userEvent.click(screen.getByRole("button", { name: "Delete openai key" }));
    expect(calls.some((c) => c.cmd === "key_delete" && c.args.provider === "openai")).toBe(true);
  });

  it("chooses which models to offer and the default", async () => {
    setup();
    const b = await screen.findByRole("checkbox", { name: /ollama:b/ });
    expect(b).toBeChecked();
    await userEvent.click(b);
    let saved = calls.filter((c) => c.cmd === "set_model_settings").at(-1)!.args.models as Settings["models"];
    expect(saved.enabled).toEqual(["ollama:a"]);
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Default model" }), "ollama:b");
    saved = calls.filter((c) => c.cmd === "set_model_settings").at(-1)!.args.models as Settings["models"];
    expect(saved.default_model).toBe("ollama:b");
  });

  it("adds an OpenAI-compatible server and edits provider URLs", async () => {
    setup();
    await userEvent.type(await screen.findByLabelText("Server name"), "LMStudio");
    await userEvent.type(screen.getByLabelText("Server URL"), "http://127.0.0.1:1234/v1");
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    const saved = calls.filter((c) => c.cmd === "set_provider_settings").at(-1)!.args.providers as Settings["providers"];
    expect(saved.compatible).toEqual([{ name: "lmstudio", url: "http://127.0.0.1:1234/v1", needs_key: false }]);
    const ollama = screen.getByLabelText("Ollama URL");
    await userEvent.clear(ollama);
    await userEvent.type(ollama, "http://gpu-box:11434{Enter}");
    const urls = calls.filter((c) => c.cmd === "set_provider_settings").at(-1)!.args.providers as Settings["providers"];
    expect(urls.ollama_url).toBe("http://gpu-box:11434");
    // Ollama's window: what Perch runs its models at.
    const window = screen.getByRole("spinbutton", { name: "Ollama context" });
    await userEvent.clear(window);
    await userEvent.type(window, "32768{Enter}");
    const saved2 = calls.filter((c) => c.cmd === "set_provider_settings").at(-1)!.args.providers as Settings["providers"];
    expect(saved2.ollama_context).toBe(32768);
  });

  it("refuses a bad server name or address next to the fields, keeping what was typed", async () => {
    setup();
    const name = await screen.findByLabelText("Server name");
    const url = screen.getByLabelText("Server URL");
    await userEvent.type(name, "My Server!!");
    await userEvent.type(url, "not a url");
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Use letters, digits, - and _ only");
    expect(alert).toHaveTextContent("must start with http:// or https://");
    expect(name).toHaveValue("My Server!!");
    expect(url).toHaveValue("not a url");
    expect(calls.some((c) => c.cmd === "set_provider_settings")).toBe(false);
    // A bad provider address is said beside it too, and not saved.
    const ollama = screen.getByLabelText("Ollama URL");
    await userEvent.clear(ollama);
    await userEvent.type(ollama, "gpu-box:11434{Enter}");
    expect(await screen.findByText("The address must start with http:// or https://.")).toBeInTheDocument();
    expect(ollama).toHaveValue("gpu-box:11434");
    expect(calls.some((c) => c.cmd === "set_provider_settings")).toBe(false);
  });

  it("shows the address in use beside a field an environment variable overrides", async () => {
    setup([
      { name: "ollama", kind: "ollama", url: "http://gpu-box:11434", key_env: null, needs_key: false },
      { name: "openai", kind: "open_ai", url: SETTINGS.providers.openai_url, key_env: "OPENAI_API_KEY", needs_key: true },
    ]);
    expect(await screen.findByText(/In use: http:\/\/gpu-box:11434, set by OLLAMA_HOST/)).toBeInTheDocument();
    expect(screen.queryByText(/set by OPENAI_BASE_URL/)).toBeNull();
  });

  it("overrides a price and resets it", async () => {
    setup();
    const table = await screen.findByRole("table", { name: "Prices" });
    expect(within(table).getByText("openai:gpt-4.1")).toBeInTheDocument();
    await userEvent.type(screen.getByLabelText("Price model"), "openai:gpt-4.1");
    await userEvent.type(screen.getByLabelText("Input price"), "1.5");
    await userEvent.type(screen.getByLabelText("Output price"), "6");
    await userEvent.click(screen.getByRole("button", { name: "Set" }));
    const saved = calls.filter((c) => c.cmd === "set_model_settings").at(-1)!.args.models as Settings["models"];
    expect(saved.prices).toEqual([{ model: "openai:gpt-4.1", input: 1.5, output: 6 }]);
  });
});
