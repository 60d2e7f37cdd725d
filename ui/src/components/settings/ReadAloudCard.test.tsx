import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { ReadAloudCard } from "./ReadAloudCard";
import { SettingsProvider } from "../../lib/settings";
import { calls, onCommand } from "../../test/tauri";
import { SETTINGS, healthyApp } from "../../test/fixtures";
import type { Settings, VoiceView } from "../../bindings";

function voice(name: string, state: VoiceView["state"]): VoiceView {
  return { name, language: "en", summary: "US English", size: 63_206_179, state, partial: 0 };
}

describe("Settings -> Voice, reading aloud", () => {
  it("downloads a natural voice, reads with it, and saves the speed, loudspeaker and auto-reading", async () => {
    healthyApp();
    let settings: Settings = SETTINGS;
    onCommand("get_settings", () => settings);
    onCommand("set_speech_settings", ({ speech }) => (settings = { ...settings, speech: speech as Settings["speech"] }));
    let voices = [voice("en_US-lessac-medium", "absent")];
    onCommand("speech_voices", () => voices);
    onCommand("speech_choice", () =>
      voices[0].state === "ready"
        ? { kind: "piper", name: "en_US-lessac-medium", path: "/d/en_US-lessac-medium.onnx" }
        : { kind: "espeak", voice: "en-us", reason: "the natural voice en_US-lessac-medium is not downloaded" },
    );
    onCommand("speech_devices", () => [{ name: "Speakers", is_default: true }]);
    onCommand("speech_voice_download", (args) => {
      const channel = args.progress as { onmessage: (p: { done: number; total: number }) => void };
      channel.onmessage({ done: 30_000_000, total: 63_206_179 });
      voices = [voice("en_US-lessac-medium", "ready")];
      return voices[0];
    });
    render(
      <SettingsProvider>
        <ReadAloudCard />
      </SettingsProvider>,
    );
    expect(await screen.findByText(/espeak-ng reads answers: the natural voice en_US-lessac-medium is not downloaded/)).toBeInTheDocument();
    const list = screen.getByRole("list", { name: "Natural voices" });
    await userEvent.click(within(list).getByRole("button", { name: "Download (63 MB)" }));
    expect(await screen.findByText("Answers are read by en_US-lessac-medium.")).toBeInTheDocument();
    expect(within(list).getByRole("button", { name: "Delete" })).toBeInTheDocument();

    await userEvent.click(screen.getByRole("checkbox", { name: "Read answers aloud as they are written" }));
    await waitFor(() => expect(settings.speech.speak_answers).toBe(true));
    await userEvent.selectOptions(screen.getByRole("combobox", { name: "Loudspeaker" }), "Speakers");
    await waitFor(() => expect(settings.speech.device).toBe("Speakers"));
    const saved = calls.filter((c) => c.cmd === "set_speech_settings");
    expect(saved.length).toBeGreaterThanOrEqual(2);
  });
});
