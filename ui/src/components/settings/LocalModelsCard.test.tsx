import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { LocalModelsCard } from "./LocalModelsCard";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import { SETTINGS, catalogModel, healthyApp, localOverview } from "../../test/fixtures";
import type { LocalModel, LocalOverview, Settings } from "../../bindings";

const added: LocalModel = {
  name: "mistral-7b",
  title: "Mistral 7B",
  path: "/models/mistral-7b.Q4_K_M.gguf",
  size: 4_368_439_296,
  source: "added",
  architecture: "llama",
  trained_context: 32768,
  kv_bytes_per_token: 131072,
  tools: true,
  thinking: false,
  problem: null,
};

function setup(start: Partial<LocalOverview> = {}) {
  healthyApp();
  let settings: Settings = SETTINGS;
  let overview = localOverview(start);
  onCommand("get_settings", () => settings);
  onCommand("set_local_settings", ({ local }) => (settings = { ...settings, local: local as Settings["local"] }));
  onCommand("local_overview", () => overview);
  let release: () => void = () => {};
  onCommand("local_model_download", (args) => {
    const channel = args.progress as { onmessage: (p: { done: number; total: number }) => void };
    channel.onmessage({ done: 320_000_000, total: 639_446_688 });
    // The download finishes when the test says so, so the progress bar can be seen.
    return new Promise((resolve) => {
      release = () => {
        overview = { ...overview, catalog: overview.catalog.map((c) => (c.id === args.id ? { ...c, installed: true } : c)) };
        resolve({ ...added, name: args.id, source: "downloaded" });
      };
    });
  });
  onCommand("local_model_cancel", () => true);
  onCommand("local_model_delete", ({ name }) => {
    overview = {
      ...overview,
      catalog: overview.catalog.map((c) => (c.id === name ? { ...c, installed: false } : c)),
      models: overview.models.filter((m) => m.name !== name),
    };
    return null;
  });
  onCommand("local_model_add", ({ path }) => {
    if (!String(path).endsWith(".gguf")) throw { kind: "invalid", message: `${path} is not a GGUF file` };
    overview = { ...overview, models: [...overview.models, added] };
    return added;
  });
  onCommand("local_runtime_stop", () => localOverview().runtime);
  render(
    <SettingsProvider>
      <LocalModelsCard />
    </SettingsProvider>,
  );
  return { finishDownload: () => release() };
}

describe("Settings -> Models -> On this computer", () => {
  it("downloads a catalogue model with progress and Stop, then offers to delete it", async () => {
    const { finishDownload } = setup();
    const qwen = await screen.findByRole("row", { name: "Model Qwen3 0.6B" });
    expect(qwen).toHaveTextContent("639 MB disk");
    expect(qwen).toHaveTextContent("~1.1 GB memory");
    expect(qwen).toHaveTextContent("local:qwen3-0.6b");
    await userEvent.click(within(qwen).getByRole("button", { name: "Download" }));
    const bar = await within(qwen).findByRole("progressbar", { name: "Downloading Qwen3 0.6B" });
    expect(bar).toHaveAttribute("aria-valuenow", "50");
    expect(bar).toHaveTextContent("320 MB of 639 MB");
    await userEvent.click(within(bar).getByRole("button", { name: "Stop" }));
    expect(calls.some((c) => c.cmd === "local_model_cancel" && c.args.id === "qwen3-0.6b")).toBe(true);
    finishDownload();
    await waitFor(() => expect(within(qwen).getByRole("button", { name: "Delete" })).toBeInTheDocument());
    await userEvent.click(within(qwen).getByRole("button", { name: "Delete" }));
    await userEvent.click(within(qwen).getByRole("button", { name: "Delete Qwen3 0.6B" }));
    expect(calls.some((c) => c.cmd === "local_model_delete" && c.args.name === "qwen3-0.6b")).toBe(true);
    await waitFor(() => expect(within(qwen).getByRole("button", { name: "Download" })).toBeInTheDocument());
  });

  it("offers to resume an interrupted download", async () => {
    const base = localOverview();
    setup({ catalog: base.catalog.map((c, i) => (i === 1 ? { ...c, partial: 200_000_000 } : c)) });
    const gemma = await screen.findByRole("row", { name: "Model Gemma 3 1B" });
    expect(within(gemma).getByRole("button", { name: "Resume (200 MB here)" })).toBeInTheDocument();
  });

  it("adds a GGUF file, keeps a refused path for correction, and forgets (not deletes) an added file", async () => {
    setup();
    const path = await screen.findByRole("textbox", { name: "GGUF file" });
    await userEvent.type(path, "/models/notes.txt");
    await userEvent.click(screen.getByRole("button", { name: "Add file" }));
    const refused = await screen.findByRole("alert");
    expect(refused).toHaveTextContent("/models/notes.txt is not a GGUF file");
    // Under the fields it is about, not at the foot of the card a screen and a half below.
    expect(path.closest(".field")).toContainElement(refused);
    expect(path).toHaveValue("/models/notes.txt");
    await userEvent.clear(path);
    await userEvent.type(path, "/models/mistral-7b.Q4_K_M.gguf{Enter}");
    const row = await screen.findByRole("row", { name: "Model mistral-7b" });
    expect(path).toHaveValue("");
    expect(screen.getByRole("status")).toHaveTextContent("Added: pick it in the chat's model list as local:mistral-7b.");
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    await userEvent.click(within(row).getByRole("button", { name: "Forget" }));
    await userEvent.click(within(row).getByRole("button", { name: "Forget mistral-7b" }));
    await waitFor(() => expect(screen.queryByRole("row", { name: "Model mistral-7b" })).not.toBeInTheDocument());
  });

  it("picks a GGUF file with the system's chooser, then adds it", async () => {
    setup();
    onCommand("files_choose_file", () => "/models/mistral-7b.Q4_K_M.gguf");
    await userEvent.click(await screen.findByRole("button", { name: "Browse…" }));
    const asked = calls.find((c) => c.cmd === "files_choose_file")!.args;
    expect(asked).toEqual({ title: "Add a GGUF file", kind: "GGUF models", extensions: ["gguf"] });
    const path = screen.getByRole("textbox", { name: "GGUF file" });
    await waitFor(() => expect(path).toHaveValue("/models/mistral-7b.Q4_K_M.gguf"));
    await userEvent.click(screen.getByRole("button", { name: "Add file" }));
    expect(await screen.findByRole("row", { name: "Model mistral-7b" })).toBeInTheDocument();
    // Cancelled: nothing changes.
    onCommand("files_choose_file", () => null);
    await userEvent.click(screen.getByRole("button", { name: "Browse…" }));
    expect(path).toHaveValue("");
  });

  it("saves the context length and keep-alive, and unloads a loaded model", async () => {
    setup({
      runtime: {
        state: "ready",
        pid: 4242,
        model: "qwen3-0.6b",
        context_length: 4096,
        threads: 2,
        runs_on: "the graphics card, AMD Radeon RX 7600 (RADV NAVI33): all 29 layers",
        message: null,
        restarts: 0,
      },
    });
    const runtime = await screen.findByLabelText("Local runtime");
    expect(runtime).toHaveTextContent("Loaded: qwen3-0.6b · 4096 tokens of context · 2 threads");
    expect(within(runtime).getByLabelText("Runs on")).toHaveTextContent(
      "Runs on the graphics card, AMD Radeon RX 7600 (RADV NAVI33): all 29 layers",
    );
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Context length" }), "8192");
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Keep loaded" }), "0");
    const saved = calls.filter((c) => c.cmd === "set_local_settings").map((c) => c.args.local as Settings["local"]);
    expect(saved.at(-1)).toMatchObject({ context_length: 8192, keep_alive_secs: 0 });
    await userEvent.click(within(runtime).getByRole("button", { name: "Unload" }));
    expect(calls.some((c) => c.cmd === "local_runtime_stop")).toBe(true);
  });

  it("sets how much of each installed model goes to the graphics card", async () => {
    const qwen = catalogModel("qwen3-0.6b", "Qwen3 0.6B", 639_446_688, { installed: true });
    setup({ catalog: [qwen, catalogModel("gemma3-1b", "Gemma 3 1B", 806_058_240)], models: [added] });
    const row = await screen.findByRole("row", { name: "Model Qwen3 0.6B" });
    const choice = within(row).getByRole("combobox", { name: "Graphics card for Qwen3 0.6B" });
    expect(choice).toHaveDisplayValue("GPU: as much as fits");
    // A model not yet downloaded has nothing to place.
    const gemma = screen.getByRole("row", { name: "Model Gemma 3 1B" });
    expect(within(gemma).queryByRole("combobox")).not.toBeInTheDocument();

    const saved = () => calls.filter((c) => c.cmd === "set_local_settings").map((c) => c.args.local as Settings["local"]);
    await userEvent.selectOptions(choice, "CPU only");
    expect(saved().at(-1)?.gpu_layers).toEqual({ "qwen3-0.6b": { mode: "none" } });

    const own = screen.getByRole("combobox", { name: "Graphics card for mistral-7b" });
    await userEvent.selectOptions(own, "GPU: some layers");
    expect(saved().at(-1)?.gpu_layers).toEqual({ "qwen3-0.6b": { mode: "none" }, "mistral-7b": { mode: "count", layers: 16 } });
    const layers = await screen.findByRole("spinbutton", { name: "Layers on the graphics card for mistral-7b" });
    await userEvent.clear(layers);
    await userEvent.type(layers, "20{Enter}");
    expect(saved().at(-1)?.gpu_layers?.["mistral-7b"]).toEqual({ mode: "count", layers: 20 });

    // Back to the default: the model leaves the list.
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Graphics card for Qwen3 0.6B" }), "GPU: as much as fits");
    expect(saved().at(-1)?.gpu_layers).toEqual({ "mistral-7b": { mode: "count", layers: 20 } });
  });
});
