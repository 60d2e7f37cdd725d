import { beforeEach, describe, expect, it, vi } from "vitest";
import userEvent from "@testing-library/user-event";
import { render, screen, within } from "../../test/render";
import { calls, clearMocks, onCommand } from "../../test/tauri";
import { healthyApp } from "../../test/fixtures";
import { SettingsProvider } from "../../lib/settings";
import { StartAtLoginOffer, StartAtLoginSwitch } from "./StartAtLogin";

const ENTRY = "/home/me/.config/autostart/dev.perch.app.desktop";

describe("Start at login", () => {
  beforeEach(() => {
    clearMocks();
    healthyApp();
  });

  it("turns the autostart entry on and off, and names it", async () => {
    render(
      <SettingsProvider>
        <StartAtLoginSwitch />
      </SettingsProvider>,
    );
    const box = await screen.findByRole("checkbox", { name: "Start Perch when you log in" });
    await vi.waitFor(() => expect(box).toBeEnabled());
    expect(box).not.toBeChecked();
    expect(screen.getByTestId("start-at-login")).toHaveTextContent(`As its bubble, without taking the focus. The entry is ${ENTRY}.`);
    await userEvent.click(box);
    await vi.waitFor(() => expect(box).toBeChecked());
    await userEvent.click(box);
    await vi.waitFor(() => expect(box).not.toBeChecked());
    expect(calls.filter((c) => c.cmd === "set_start_at_login").map((c) => c.args.on)).toEqual([true, false]);
  });

  it("says when the desktop's own settings turned it off", async () => {
    onCommand("start_at_login", () => ({ state: "turned_off_by_desktop", entry: ENTRY }));
    render(<StartAtLoginSwitch />);
    expect(await screen.findByText(/Turned off in your desktop's own settings/)).toBeInTheDocument();
    expect(screen.getByRole("checkbox", { name: "Start Perch when you log in" })).not.toBeChecked();
  });

  it("shows why the entry could not be written, and stays off", async () => {
    onCommand("set_start_at_login", () => {
      throw { kind: "external", message: "could not write /x: Permission denied", provider_kind: null };
    });
    render(<StartAtLoginSwitch />);
    const box = await screen.findByRole("checkbox", { name: "Start Perch when you log in" });
    await vi.waitFor(() => expect(box).toBeEnabled());
    await userEvent.click(box);
    expect(await screen.findByRole("alert")).toHaveTextContent("Permission denied");
    expect(box).not.toBeChecked();
  });

  it("offers the same as a question, and not when Perch already starts at login", async () => {
    const { unmount } = render(
      <SettingsProvider>
        <StartAtLoginOffer />
      </SettingsProvider>,
    );
    const offer = await screen.findByRole("region", { name: "Start at login" });
    await userEvent.click(within(offer).getByRole("button", { name: "Start at login" }));
    await vi.waitFor(() => expect(calls.filter((c) => c.cmd === "set_start_at_login")).toHaveLength(1));
    unmount();
    const reads = () => calls.filter((c) => c.cmd === "start_at_login").length;
    const before = reads();
    render(<StartAtLoginOffer />);
    await vi.waitFor(() => expect(reads()).toBe(before + 1));
    expect(screen.queryByRole("region", { name: "Start at login" })).not.toBeInTheDocument();
  });
});
