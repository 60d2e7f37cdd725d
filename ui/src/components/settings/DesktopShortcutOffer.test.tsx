import { beforeEach, describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { render, screen } from "../../test/render";
import { calls, clearMocks, onCommand } from "../../test/tauri";
import type { DesktopShortcut, GnomeShortcut } from "../../bindings";
import { DesktopShortcutOffer } from "./DesktopShortcutOffer";

const PROBLEM = "GNOME has no GlobalShortcuts portal. In Settings → Keyboard → …";
const status = { name: "screenshot", accelerator: "Alt+Period", active: false, problem: PROBLEM, assigned: null };
const offer: GnomeShortcut = { name: "Perch: screenshot", binding: "<Alt>period", command: "/usr/bin/perch screenshot" };
const view = (added: GnomeShortcut | null, added_keys: string | null = null): DesktopShortcut => ({
  name: "screenshot",
  keys: "Alt+.",
  offer,
  added,
  added_keys,
});

function renderOffer() {
  render(
    <DesktopShortcutOffer status={status}>
      <small role="alert">{PROBLEM}</small>
    </DesktopShortcutOffer>,
  );
}

describe("DesktopShortcutOffer", () => {
  beforeEach(() => clearMocks());

  it("adds GNOME's custom shortcut only after a yes that names the keys and the command, then says what it added", async () => {
    onCommand("desktop_shortcut", () => view(null));
    onCommand("desktop_shortcut_add", () => view(offer, "Alt+."));
    onCommand("desktop_shortcut_remove", () => view(null));
    renderOffer();
    expect(screen.getByRole("alert")).toHaveTextContent("no GlobalShortcuts portal");

    await userEvent.click(await screen.findByRole("button", { name: "Add to GNOME's shortcuts" }));
    const dialog = screen.getByRole("dialog", { name: "Add to GNOME's shortcuts" });
    expect(dialog).toHaveTextContent("Alt+. runs /usr/bin/perch screenshot?");
    // Cancel adds nothing.
    await userEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(calls.some((c) => c.cmd === "desktop_shortcut_add")).toBe(false);

    await userEvent.click(screen.getByRole("button", { name: "Add to GNOME's shortcuts" }));
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    expect(calls.filter((c) => c.cmd === "desktop_shortcut_add").map((c) => c.args)).toEqual([{ name: "screenshot" }]);
    const added = await screen.findByRole("status");
    expect(added).toHaveTextContent(
      "Added to GNOME's custom shortcuts: Alt+. runs /usr/bin/perch screenshot. Change it in GNOME's Settings → Keyboard → View and Customize Shortcuts → Custom Shortcuts.",
    );
    // The hint is replaced by what now works; no second add is offered.
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.queryByRole("button", { name: "Add to GNOME's shortcuts" })).toBeNull();

    await userEvent.click(screen.getByRole("button", { name: "Remove from GNOME's shortcuts" }));
    expect(calls.filter((c) => c.cmd === "desktop_shortcut_remove").map((c) => c.args)).toEqual([{ name: "screenshot" }]);
    expect(await screen.findByRole("button", { name: "Add to GNOME's shortcuts" })).toBeInTheDocument();
    expect(screen.getByRole("alert")).toHaveTextContent("no GlobalShortcuts portal");
  });

  it("offers to update a shortcut added for other keys, and shows why adding failed", async () => {
    const old = { ...offer, binding: "<Control><Alt>s" };
    onCommand("desktop_shortcut", () => view(old, "Ctrl+Alt+S"));
    onCommand("desktop_shortcut_add", () => {
      throw { kind: "external", message: "GNOME's custom shortcut \"Terminal\" already uses Alt+." };
    });
    renderOffer();
    expect(await screen.findByRole("status")).toHaveTextContent(
      "GNOME's custom shortcut from Perch runs /usr/bin/perch screenshot on Ctrl+Alt+S, not what this shortcut is now.",
    );
    await userEvent.click(screen.getByRole("button", { name: "Update GNOME's shortcut" }));
    await userEvent.click(screen.getByRole("button", { name: "Update" }));
    const alerts = await screen.findAllByRole("alert");
    expect(alerts.at(-1)).toHaveTextContent('"Terminal" already uses Alt+.');
  });

  it("offers nothing where the engine has nothing to offer (not GNOME)", async () => {
    onCommand("desktop_shortcut", () => null);
    renderOffer();
    await screen.findByRole("alert");
    await Promise.resolve();
    expect(calls.map((c) => c.cmd)).toContain("desktop_shortcut");
    expect(screen.queryByRole("button")).toBeNull();
  });
});
