import { describe, expect, it, vi } from "vitest";
import { act, render, screen, waitFor, within } from "./test/render";
import userEvent from "@testing-library/user-event";
import App from "./App";
import { calls, emitEvent, onCommand } from "./test/tauri";
import { healthyApp } from "./test/fixtures";

describe("App", () => {
  it("opens on the Chat page with the title bar", async () => {
    healthyApp();
    render(<App />);
    expect(await screen.findByRole("heading", { name: "Ask anything" })).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Chat" })).toHaveClass("active");
    expect(screen.getByRole("button", { name: "Mini mode" })).toBeInTheDocument();
  });

  it("explains a failed start instead of showing the app", async () => {
    healthyApp({ fatal: "the data folder /nope cannot be used: it is a file" });
    render(<App />);
    expect(await screen.findByRole("heading", { name: "Perch could not start" })).toBeInTheDocument();
    expect(screen.getByRole("alert")).toHaveTextContent("/nope cannot be used");
    expect(screen.queryByRole("link", { name: "Chat" })).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Quit Perch" }));
    expect(calls.some((c) => c.cmd === "quit_app")).toBe(true);
  });

  it("shows start-up notices and lets them be dismissed", async () => {
    healthyApp({
      notices: [{ title: "Your history database was damaged", detail: "kept as perch.db.corrupt-1", section: null }],
    });
    render(<App />);
    expect(await screen.findByText("Your history database was damaged")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByText("Your history database was damaged")).not.toBeInTheDocument();
  });

  it("takes a crash notice's link to Settings -> Logs, where the report is", async () => {
    healthyApp({
      notices: [
        {
          title: "A part of Perch (the web tools server) hit an unexpected error",
          detail: "It happened at 14:02. A crash report was saved on this computer (nothing was sent).",
          section: "Logs",
        },
      ],
    });
    onCommand("logs_tail", () => ({ entries: [], cursor: null }));
    onCommand("crash_reports", () => [
      {
        name: "20261127T140200.000Z-perch-mcp-web-42.seen.txt",
        component: "perch-mcp-web",
        at: "2026-11-27T14:02:00+00:00",
        summary: "index out of bounds: the len is 3 but the index is 7",
      },
    ]);
    onCommand("crash_report_text", () => "Perch crash report\nComponent: perch-mcp-web\n\nBacktrace:\n   0: main");
    window.location.hash = "#/";
    render(<App />);
    await userEvent.click(await screen.findByRole("link", { name: "Open Settings → Logs" }));
    expect(await screen.findByRole("tab", { name: "Logs", selected: true })).toBeInTheDocument();
    expect(screen.queryByText(/hit an unexpected error/)).not.toBeInTheDocument();
    const reports = await screen.findByRole("group", { name: "Crash reports" });
    expect(reports).toHaveTextContent("perch-mcp-web");
    expect(reports).toHaveTextContent("the len is 3 but the index is 7");
    await userEvent.click(within(reports).getByRole("button", { name: "Show" }));
    expect(await within(reports).findByText(/Backtrace:/)).toBeInTheDocument();
  });

  it("asks the shell for mini mode from the button and the shortcut, and hides to the tray", async () => {
    healthyApp();
    render(<App />);
    await userEvent.click(await screen.findByRole("button", { name: "Mini mode" }));
    await userEvent.keyboard("{Control>}{Shift>}M{/Shift}{/Control}");
    await userEvent.click(screen.getByRole("button", { name: "Close to tray" }));
    const modes = calls.filter((c) => c.cmd === "set_window_mode").map((c) => c.args.mode);
    expect(modes).toEqual(["mini", "mini"]);
    expect(calls.some((c) => c.cmd === "hide_window")).toBe(true);
  });

  it("turns into the bubble when the shell enters mini mode, and back", async () => {
    healthyApp();
    render(<App />);
    await screen.findByRole("heading", { name: "Ask anything" });
    act(() => emitEvent("window-mode-changed", { mode: "mini" }));
    expect(screen.getByRole("button", { name: "Open Perch" })).toBeInTheDocument();
    expect(screen.queryByRole("heading", { name: "Ask anything" })).not.toBeInTheDocument();
    act(() => emitEvent("window-mode-changed", { mode: "normal" }));
    expect(await screen.findByRole("heading", { name: "Ask anything" })).toBeInTheDocument();
  });

  it("ignores Close right after coming back from the bubble, where a double click would land", async () => {
    healthyApp();
    let now = 1000;
    const clock = vi.spyOn(performance, "now").mockImplementation(() => now);
    render(<App />);
    await screen.findByRole("heading", { name: "Ask anything" });
    act(() => emitEvent("window-mode-changed", { mode: "mini" }));
    act(() => emitEvent("window-mode-changed", { mode: "normal" }));
    await userEvent.click(await screen.findByRole("button", { name: "Close to tray" }));
    expect(calls.some((c) => c.cmd === "hide_window")).toBe(false);
    now += 700;
    await userEvent.click(screen.getByRole("button", { name: "Close to tray" }));
    expect(calls.some((c) => c.cmd === "hide_window")).toBe(true);
    clock.mockRestore();
  });

  it("draws square corners where the desktop composites nothing", async () => {
    healthyApp();
    onCommand("desktop_status", () => ({ composited: false, tray: true }));
    render(<App />);
    await screen.findByRole("heading", { name: "Ask anything" });
    await waitFor(() => expect(document.documentElement.dataset.composited).toBe("no"));
    delete document.documentElement.dataset.composited;
  });

  it("closes to the bubble where the desktop has no tray, and says why once", async () => {
    healthyApp();
    onCommand("desktop_status", () => ({ composited: true, tray: false }));
    localStorage.removeItem("perch.no-tray-said");
    render(<App />);
    const close = await screen.findByRole("button", { name: "Close to the bubble" });
    await userEvent.click(close);
    expect(calls.filter((c) => c.cmd === "set_window_mode").map((c) => c.args.mode)).toEqual(["mini"]);
    expect(calls.some((c) => c.cmd === "hide_window")).toBe(false);
    expect(localStorage.getItem("perch.no-tray-said")).toBe("1");
  });

  it("opens a new chat when the tray asks for one", async () => {
    healthyApp();
    render(<App />);
    await userEvent.click(await screen.findByRole("link", { name: "History" }));
    expect(await screen.findByText("No conversations yet")).toBeInTheDocument();
    act(() => emitEvent("navigate-requested", { route: "new_chat" }));
    expect(await screen.findByRole("heading", { name: "Ask anything" })).toBeInTheDocument();
  });

  it("opens Settings -> Logs when the tray asks for the logs", async () => {
    healthyApp();
    onCommand("logs_tail", () => ({ entries: [], cursor: null }));
    onCommand("crash_reports", () => []);
    window.location.hash = "#/";
    render(<App />);
    await screen.findByRole("heading", { name: "Ask anything" });
    act(() => emitEvent("navigate-requested", { route: "logs" }));
    expect(await screen.findByRole("tab", { name: "Logs", selected: true })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Open log folder" })).toBeInTheDocument();
  });

  it("a page asked for while in mini mode shows once the window is back", async () => {
    healthyApp();
    onCommand("review_latest", () => null);
    onCommand("review_versions", () => []);
    render(<App />);
    await screen.findByRole("heading", { name: "Ask anything" });
    act(() => emitEvent("window-mode-changed", { mode: "mini" }));
    act(() => emitEvent("navigate-requested", { route: "review" }));
    act(() => emitEvent("window-mode-changed", { mode: "normal" }));
    expect(await screen.findByText("No review yet")).toBeInTheDocument();
  });

  it("quits on Ctrl+Q", async () => {
    healthyApp();
    onCommand("quit_app", () => null);
    render(<App />);
    await screen.findByRole("heading", { name: "Ask anything" });
    await userEvent.keyboard("{Control>}q{/Control}");
    expect(calls.some((c) => c.cmd === "quit_app")).toBe(true);
  });
});
