import { describe, expect, it, vi } from "vitest";
import { act, render, screen, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { UpdatePhase, UpdateStatus } from "../../bindings";
import { SettingsProvider } from "../../lib/settings";
import { SETTINGS } from "../../test/fixtures";
import { calls, emitEvent, onCommand } from "../../test/tauri";
import { UpdateNotice, UpdatesCard } from "./UpdatesCard";

const OFFER = { version: "0.2.0", notes: "- Logs in Settings\n- Faster start", date: "2026-11-20T10:00:00+00:00" };
const MANUAL = { kind: "manual" as const, reason: "This copy of Perch was not installed from a package." };
const IN_PLACE = { kind: "in_place" as const, package: "deb" };

function status(phase: UpdatePhase, over: Partial<UpdateStatus> = {}): UpdateStatus {
  const offered = !["idle", "checking", "up_to_date"].includes(phase.kind);
  return {
    current_version: "0.1.0",
    phase,
    offer: offered ? OFFER : null,
    route: IN_PLACE,
    last_checked_ms: null,
    ...over,
  };
}

async function renderCard() {
  onCommand("get_settings", () => SETTINGS);
  render(
    <SettingsProvider>
      <UpdatesCard />
    </SettingsProvider>,
  );
  return screen.findByRole("group", { name: "Updates" });
}

describe("UpdatesCard", () => {
  it("checks only when asked, then offers the release with its notes", async () => {
    let current = status({ kind: "idle" });
    onCommand("update_status", () => current);
    onCommand("update_check", () => {
      current = status({ kind: "available" });
      return current;
    });
    const card = await renderCard();
    expect(within(card).getByRole("status")).toHaveTextContent("This is Perch 0.1.0.");
    expect(calls.some((c) => c.cmd === "update_check")).toBe(false);
    expect(within(card).queryByRole("button", { name: /Download/ })).toBeNull();

    await userEvent.click(within(card).getByRole("button", { name: "Check now" }));
    expect(await within(card).findByRole("button", { name: "Download 0.2.0" })).toBeInTheDocument();
    expect(within(card).getByRole("status")).toHaveTextContent("Perch 0.2.0 is available (this is 0.1.0).");
    expect(within(card).getByText("What's new in 0.2.0")).toBeInTheDocument();
    expect(await within(card).findByText("Logs in Settings")).toBeInTheDocument();
    // Nothing was downloaded without the click.
    expect(calls.some((c) => c.cmd === "update_download")).toBe(false);
  });

  it("shows the download's progress from events and installs only on a click", async () => {
    onCommand("update_status", () => status({ kind: "available" }));
    onCommand("update_download", () => status({ kind: "ready", install_on_quit: false, saved: null }));
    onCommand("update_install", () => status({ kind: "ready", install_on_quit: true, saved: null }));
    const card = await renderCard();
    act(() =>
      emitEvent("update-changed", { status: status({ kind: "downloading", received: 5_000_000, total: 20_000_000 }) }),
    );
    const bar = within(card).getByRole("progressbar", { name: "Downloading Perch 0.2.0" });
    expect(bar).toHaveAttribute("aria-valuenow", "25");
    expect(bar).toHaveTextContent("5.0 MB of 20.0 MB");

    act(() => emitEvent("update-changed", { status: status({ kind: "ready", install_on_quit: false, saved: null }) }));
    expect(within(card).getByRole("status")).toHaveTextContent("downloaded and its signature verified");
    expect(calls.some((c) => c.cmd === "update_install")).toBe(false);
    await userEvent.click(within(card).getByRole("button", { name: "Install when I quit" }));
    expect(calls.find((c) => c.cmd === "update_install")?.args).toEqual({ onQuit: true });
    expect(within(card).getByRole("button", { name: "Install and restart" })).toBeInTheDocument();
  });

  it("says how to install by hand where this copy cannot replace itself", async () => {
    const saved = "/home/me/.local/share/perch/updates/Perch_0.2.0_amd64.deb";
    onCommand("update_status", () => status({ kind: "ready", install_on_quit: false, saved }, { route: MANUAL }));
    onCommand("update_show_package", () => null);
    const card = await renderCard();
    expect(within(card).getByText(/not installed from a package/)).toHaveTextContent(saved);
    expect(within(card).getByText(`sudo apt install ${saved}`)).toBeInTheDocument();
    expect(within(card).queryByRole("button", { name: "Install and restart" })).toBeNull();
    await userEvent.click(within(card).getByRole("button", { name: "Show in folder" }));
    expect(calls.some((c) => c.cmd === "update_show_package")).toBe(true);
  });

  it("shows a refused download once, and offers to try again", async () => {
    const message = "The download does not carry Perch's signature, so it was discarded and nothing was installed.";
    let current = status({ kind: "available" });
    onCommand("update_status", () => current);
    onCommand("update_download", () => {
      current = status({ kind: "failed", step: "download", message });
      throw { kind: "external", message };
    });
    const card = await renderCard();
    await userEvent.click(within(card).getByRole("button", { name: "Download 0.2.0" }));
    const alerts = await within(card).findAllByRole("alert");
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toHaveTextContent(message);
    expect(within(card).getByRole("button", { name: "Download 0.2.0" })).toBeInTheDocument();
  });

  it("turns the check at start off", async () => {
    onCommand("update_status", () => status({ kind: "idle" }));
    onCommand("set_update_settings", () => ({ ...SETTINGS, updates: { check_at_start: false } }));
    const card = await renderCard();
    const box = within(card).getByRole("checkbox", { name: "Check for updates when Perch starts" });
    await vi.waitFor(() => expect(box).toBeEnabled());
    expect(box).toBeChecked();
    await userEvent.click(box);
    expect(calls.find((c) => c.cmd === "set_update_settings")?.args).toEqual({ checkAtStart: false });
  });
});

describe("UpdateNotice", () => {
  it("tells of a release found at start until dismissed", async () => {
    onCommand("update_status", () => status({ kind: "idle" }));
    render(<UpdateNotice />);
    await act(async () => {});
    expect(screen.queryByRole("status")).toBeNull();
    act(() => emitEvent("update-changed", { status: status({ kind: "available" }) }));
    expect(screen.getByRole("status")).toHaveTextContent("Perch 0.2.0 is available");
    expect(screen.getByRole("link", { name: "See what's new" })).toHaveAttribute("href", "#/settings");
    await userEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByRole("status")).toBeNull();
  });
});
