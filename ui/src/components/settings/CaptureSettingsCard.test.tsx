import { beforeEach, describe, expect, it } from "vitest";
import { render, screen } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { CaptureSettingsCard, accelerator, readable } from "./CaptureSettingsCard";
import { SettingsProvider } from "../../lib/settings";
import { calls, clearMocks, onCommand } from "../../test/tauri";
import { healthyApp } from "../../test/fixtures";

describe("CaptureSettingsCard", () => {
  beforeEach(() => clearMocks());

  it("turns key presses into accelerators", () => {
    const key = (code: string, mods: Partial<Record<"ctrlKey" | "altKey" | "shiftKey" | "metaKey", boolean>> = {}) =>
      accelerator({ code, ctrlKey: false, altKey: false, shiftKey: false, metaKey: false, ...mods });
    expect(key("Period", { altKey: true })).toBe("Alt+Period");
    expect(key("KeyS", { ctrlKey: true, shiftKey: true })).toBe("Ctrl+Shift+S");
    expect(key("Digit5", { metaKey: true })).toBe("Super+5");
    expect(key("AltLeft", { altKey: true })).toBeNull();
    expect(readable("Alt+Shift+Period")).toBe("Alt + Shift + .");
  });

  it("records a shortcut by pressing it and shows why it does not work", async () => {
    healthyApp();
    onCommand("shortcut_statuses", () => [
      { name: "screenshot", accelerator: "Alt+Period", active: true, problem: null, assigned: null },
      // On Wayland the desktop's portal may bind another key than the one asked for.
      { name: "screenshot_window", accelerator: "Alt+Shift+Period", active: true, problem: null, assigned: "Super+S" },
    ]);
    onCommand("set_capture_settings", ({ settings }) => [
      {
        name: "screenshot",
        accelerator: (settings as { shortcut: string }).shortcut,
        active: false,
        problem: "another application already uses Ctrl+Alt+P; pick another shortcut",
        assigned: null,
      },
    ]);
    render(
      <SettingsProvider>
        <CaptureSettingsCard />
      </SettingsProvider>,
    );
    const field = await screen.findByRole("button", { name: /^Screenshot shortcut / });
    expect(field).toHaveTextContent("Alt + .");
    expect(await screen.findByText("The desktop bound it as Super+S.")).toBeInTheDocument();
    await userEvent.click(field);
    expect(field).toHaveTextContent("Press the keys");
    await userEvent.keyboard("{Control>}{Alt>}p{/Alt}{/Control}");
    const saved = calls.find((c) => c.cmd === "set_capture_settings")!.args.settings as { shortcut: string };
    expect(saved.shortcut).toBe("Ctrl+Alt+P");
    expect(await screen.findByRole("alert")).toHaveTextContent("another application already uses Ctrl+Alt+P");

    await userEvent.click(screen.getByRole("radio", { name: "Region" }));
    const modes = calls.filter((c) => c.cmd === "set_capture_settings").map((c) => (c.args.settings as { mode: string }).mode);
    expect(modes.at(-1)).toBe("precision");
  });
});
