import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { VoiceSettingsCard } from "./VoiceSettingsCard";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import { SETTINGS, healthyApp } from "../../test/fixtures";
import type { ModelView, Settings } from "../../bindings";

function model(name: string, state: ModelView["state"], size = 77_704_715): ModelView {
  return {
    name,
    english_only: name.endsWith(".en"),
    summary: "A model",
    size,
    memory_mb: 273,
    state,
    partial: state === "partial" ? 10_000_000 : 0,
    path: `/data/models/whisper/ggml-${name}.bin`,
  };
}

function setup() {
  healthyApp();
  let settings: Settings = SETTINGS;
  onCommand("get_settings", () => settings);
  onCommand("set_voice_settings", ({ voice }) => (settings = { ...settings, voice: voice as Settings["voice"] }));
  let models = [model("tiny.en", "ready"), model("base", "absent", 147_951_465), model("small", "partial", 487_601_967)];
  onCommand("voice_models", () => models);
  onCommand("voice_devices", () => [
    { name: "Built-in Microphone", is_default: true, sample_rate: 48000, channels: 2 },
    { name: "USB Headset", is_default: false, sample_rate: 44100, channels: 1 },
  ]);
  onCommand("voice_shortcut_statuses", () => [
    {
      name: "push_to_talk",
      accelerator: "Ctrl+Alt+Space",
      active: false,
      problem: "Ctrl+Alt+Space is already taken by another application or another Perch shortcut; pick another",
    },
    { name: "dictate_anywhere", accelerator: "Ctrl+Alt+D", active: true, problem: null, assigned: null },
  ]);
  onCommand("voice_runs_on", () =>
    settings.voice.use_gpu
      ? "the graphics card, AMD Radeon RX 7600 (RADV NAVI33)"
      : "the CPU (the graphics card is turned off for dictation in Settings -> Voice)",
  );
  onCommand("typing_path", () => ({ name: "typing into other apps", available: true, detail: "X11 (XTest): dictate-anywhere types at the cursor" }));
  onCommand("voice_model_download", (args) => {
    const channel = args.progress as { onmessage: (p: { done: number; total: number }) => void };
    channel.onmessage({ done: 50_000_000, total: 147_951_465 });
    models = models.map((m) => (m.name === "base" ? { ...m, state: "ready" } : m));
    return models[1];
  });
  onCommand("voice_model_delete", ({ name }) => {
    models = models.map((m) => (m.name === name ? { ...m, state: "absent" } : m));
    return models.find((m) => m.name === name);
  });
  render(
    <SettingsProvider>
      <VoiceSettingsCard />
    </SettingsProvider>,
  );
}

describe("Settings -> Voice", () => {
  it("lists the models with disk and memory needs, downloads, chooses and deletes", async () => {
    setup();
    const base = await screen.findByRole("row", { name: "Model base" });
    expect(base).toHaveTextContent("148 MB disk");
    expect(base).toHaveTextContent("~273 MB memory");
    expect(screen.getByRole("row", { name: "Model small" })).toHaveTextContent("Resume (10 MB here)");
    expect(within(base).getByRole("radio", { name: "Use base" })).toBeDisabled();
    await userEvent.click(within(base).getByRole("button", { name: "Download" }));
    await waitFor(() => expect(within(base).getByRole("radio", { name: "Use base" })).toBeEnabled());
    await userEvent.click(within(base).getByRole("radio", { name: "Use base" }));
    const saved = calls.filter((c) => c.cmd === "set_voice_settings").map((c) => c.args.voice as Settings["voice"]);
    expect(saved.at(-1)!.model).toBe("base");
    const tiny = screen.getByRole("row", { name: "Model tiny.en" });
    await userEvent.click(within(tiny).getByRole("button", { name: "Delete" }));
    await userEvent.click(within(tiny).getByRole("button", { name: "Delete tiny.en" }));
    expect(calls.some((c) => c.cmd === "voice_model_delete" && c.args.name === "tiny.en")).toBe(true);
    await waitFor(() => expect(within(tiny).getByRole("button", { name: "Download" })).toBeInTheDocument());
  });

  it("picks the microphone, the language and send-after, and reports a shortcut conflict", async () => {
    setup();
    const mic = await screen.findByRole("combobox", { name: "Microphone" });
    await waitFor(() => expect(within(mic).getByRole("option", { name: /USB Headset/ })).toBeInTheDocument());
    expect(within(mic).getByRole("option", { name: "System default (Built-in Microphone)" })).toBeInTheDocument();
    await userEvent.selectOptions(mic, "USB Headset");
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Language" }), "de");
    await userEvent.click(screen.getByRole("checkbox", { name: /Send after dictation/ }));
    const saved = calls.filter((c) => c.cmd === "set_voice_settings").map((c) => c.args.voice as Settings["voice"]);
    expect(saved.at(-1)).toMatchObject({ device: "USB Headset", language: "de", send_after_dictation: true });
    expect(await screen.findByText(/already taken by another application/)).toBeInTheDocument();
    const shortcut = screen.getByRole("textbox", { name: "Push-to-talk shortcut" });
    await userEvent.clear(shortcut);
    await userEvent.type(shortcut, "Ctrl+Shift+D{Enter}");
    await userEvent.click(screen.getByRole("radio", { name: "Press to start and stop" }));
    const last = calls.filter((c) => c.cmd === "set_voice_settings").map((c) => c.args.voice as Settings["voice"]);
    expect(last.at(-1)).toMatchObject({ push_to_talk: "Ctrl+Shift+D", push_to_talk_mode: "toggle" });
    // Dictate-anywhere has its own field and its own status.
    expect(screen.getByText("Active: Ctrl+Alt+D")).toBeInTheDocument();
    expect(screen.getByText(/Typing into other apps: X11 \(XTest\)/)).toBeInTheDocument();
    const anywhere = screen.getByRole("textbox", { name: "Dictate-anywhere shortcut" });
    await userEvent.clear(anywhere);
    await userEvent.type(anywhere, "Super+D{Enter}");
    const after = calls.filter((c) => c.cmd === "set_voice_settings").map((c) => c.args.voice as Settings["voice"]);
    expect(after.at(-1)).toMatchObject({ dictate_anywhere: "Super+D", push_to_talk: "Ctrl+Shift+D" });
  });

  it("keeps the model 30 s after dictating unless told otherwise, and saves the choice", async () => {
    setup();
    const keep = await screen.findByRole("combobox", { name: "Keep the model in memory" });
    expect(keep).toHaveDisplayValue("30 s");
    expect(within(keep).getAllByRole("option").map((o) => o.textContent)).toEqual([
      "No, release it at once",
      "30 s",
      "2 minutes",
      "10 minutes",
      "1 hour",
    ]);
    await userEvent.selectOptions(keep, "10 minutes");
    const saved = calls.filter((c) => c.cmd === "set_voice_settings").map((c) => c.args.voice as Settings["voice"]);
    expect(saved.at(-1)).toMatchObject({ keep_model_secs: 600 });
  });

  it("says where dictation runs and moves it to the CPU when the graphics card is turned off", async () => {
    setup();
    const toggle = await screen.findByRole("checkbox", { name: /Transcribe on the graphics card/ });
    expect(toggle).toBeChecked();
    expect(await screen.findByLabelText("Dictation runs on")).toHaveTextContent(
      "Runs on the graphics card, AMD Radeon RX 7600 (RADV NAVI33)",
    );
    await userEvent.click(toggle);
    const saved = calls.filter((c) => c.cmd === "set_voice_settings").map((c) => c.args.voice as Settings["voice"]);
    expect(saved.at(-1)).toMatchObject({ use_gpu: false });
    // Asked again after the change: the engine's answer, not a guess.
    await waitFor(() => expect(screen.getByLabelText("Dictation runs on")).toHaveTextContent("Runs on the CPU (the graphics card is turned off"));
  });
});
