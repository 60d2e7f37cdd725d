import { describe, expect, it } from "vitest";
import { render, screen } from "../test/render";
import userEvent from "@testing-library/user-event";
import { MemoryRouter } from "react-router";
import { FailureNotices } from "../components/Notices";
import { TitleBar } from "../components/TitleBar";
import { MiniBubble } from "../components/MiniBubble";
import { commands } from "../ipc";
import { attempt } from "./failures";
import { onCommand } from "../test/tauri";

function titleBar() {
  return render(
    <MemoryRouter>
      <TitleBar />
      <FailureNotices />
    </MemoryRouter>,
  );
}

describe("failures of fire-and-forget commands", () => {
  it("shows a failed close-to-tray, and dismissing it removes it", async () => {
    onCommand("hide_window", () => {
      throw { kind: "window", message: "the window manager refused" };
    });
    titleBar();
    await userEvent.click(screen.getByRole("button", { name: "Close to tray" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not close the window to the tray");
    expect(alert).toHaveTextContent("the window manager refused");
    await userEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows nothing when the command succeeds, and a success clears the same action's failure", async () => {
    let fail = true;
    onCommand("set_window_mode", () => {
      if (fail) throw { kind: "window", message: "no window" };
      return null;
    });
    titleBar();
    await userEvent.click(screen.getByRole("button", { name: "Mini mode" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Could not switch to mini mode");
    fail = false;
    await userEvent.click(screen.getByRole("button", { name: "Mini mode" }));
    await expect.poll(() => screen.queryByRole("alert")).toBeNull();
  });

  it("reports the same failure once and keeps the newest few", async () => {
    onCommand("open_url", (args) => {
      throw { kind: "external", message: `no browser for ${String(args.url)}` };
    });
    render(<FailureNotices />);
    for (const n of [1, 1, 2, 3, 4]) await attempt("Could not open the link", commands.openUrl(`https://e.x/${n}`));
    const alerts = await screen.findAllByRole("alert");
    expect(alerts.map((a) => a.textContent)).toEqual([
      expect.stringContaining("e.x/2"),
      expect.stringContaining("e.x/3"),
      expect.stringContaining("e.x/4"),
    ]);
  });

  it("resolves to the value on success and undefined on failure", async () => {
    onCommand("chat_stop", () => true);
    expect(await attempt("Stop", commands.chatStop("r1"))).toBe(true);
    onCommand("chat_stop", () => {
      throw { kind: "unavailable", message: "down" };
    });
    expect(await attempt("Stop", commands.chatStop("r1"))).toBeUndefined();
  });

  it("marks the mini bubble when restoring the window fails, with the reason as its tooltip", async () => {
    onCommand("set_window_mode", () => {
      throw { kind: "window", message: "the compositor said no" };
    });
    render(<MiniBubble />);
    const bubble = screen.getByRole("button", { name: "Open Perch" });
    await userEvent.click(bubble);
    await expect.poll(() => bubble.className).toContain("failed");
    expect(bubble).toHaveAttribute("title", "Could not open the window: the compositor said no");
  });
});
