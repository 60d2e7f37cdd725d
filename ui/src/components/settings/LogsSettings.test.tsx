import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { Cursor, DiagnosticsSaved, LogEntry, Tail } from "../../bindings";
import { calls, onCommand } from "../../test/tauri";
import { LogsSettings } from "./LogsSettings";

function entry(over: Partial<LogEntry>): LogEntry {
  return {
    at: "2026-03-01T10:00:01.000+00:00",
    level: "info",
    component: "engine",
    target: "perch_core::engine",
    server: null,
    text: "engine started",
    ...over,
  };
}

const FIRST: LogEntry[] = [
  entry({}),
  entry({ level: "warn", component: "mcp", target: "stderr", server: "web", text: "rate limited by the search service" }),
  entry({ level: "error", component: "terminal", target: "perch_core::terminal::exec", text: "the command timed out" }),
  entry({ level: "debug", component: "voice", target: "perch_core::voice::keeper", text: "model dropped after idle" }),
];

const SAVED: DiagnosticsSaved = {
  path: "/home/me/Downloads/perch-diagnostics-20260301-100001.zip",
  size_bytes: 12_345,
  files: ["doctor.json", "versions.txt", "settings.json", "bundle.txt"],
  removed: "3 stored or environment secrets, 1 authorization header",
  logs_cut: false,
  unreadable_keys: 0,
};

/** The tail answers the first entries, then whatever `later` holds, once. */
function setup() {
  const later: LogEntry[] = [];
  const cursors: (Cursor | null)[] = [];
  onCommand("logs_tail", ({ cursor }) => {
    cursors.push(cursor as Cursor | null);
    const entries = cursor ? later.splice(0) : FIRST;
    const tail: Tail = { entries, cursor: { file: "perch.2026-03-01.log", offset: 100, servers: {} } };
    return tail;
  });
  onCommand("logs_open_folder", () => null);
  render(<LogsSettings />);
  return { later, cursors };
}

describe("LogsSettings", () => {
  it("shows the tail at info and above, and filters it by level, component and search", async () => {
    const { later, cursors } = setup();
    const log = await screen.findByRole("list", { name: "Log entries" });
    await waitFor(() => expect(log).toHaveTextContent("engine started"));
    expect(log).toHaveTextContent("rate limited by the search service");
    expect(log).toHaveTextContent("web");
    expect(log).not.toHaveTextContent("model dropped after idle");

    await userEvent.click(screen.getByRole("radio", { name: "Debug" }));
    expect(log).toHaveTextContent("model dropped after idle");
    await userEvent.click(screen.getByRole("radio", { name: "Errors" }));
    expect(within(log).getAllByRole("listitem")).toHaveLength(1);
    expect(log).toHaveTextContent("the command timed out");

    await userEvent.click(screen.getByRole("radio", { name: "Info" }));
    const components = screen.getByRole("group", { name: "Component" });
    await userEvent.click(within(components).getByRole("button", { name: "MCP servers" }));
    expect(within(components).getByRole("button", { name: "MCP servers" })).toHaveAttribute("aria-pressed", "true");
    expect(within(log).getAllByRole("listitem")).toHaveLength(1);
    expect(log).toHaveTextContent("rate limited");

    await userEvent.click(within(components).getByRole("button", { name: "All" }));
    await userEvent.type(screen.getByRole("searchbox", { name: "Search the log" }), "TIMED");
    expect(within(log).getAllByRole("listitem")).toHaveLength(1);
    expect(log).toHaveTextContent("the command timed out");
    await userEvent.clear(screen.getByRole("searchbox", { name: "Search the log" }));

    // The next poll hands back the cursor and adds only what is new.
    later.push(entry({ text: "a line written later" }));
    await waitFor(() => expect(log).toHaveTextContent("a line written later"), { timeout: 3000 });
    expect(cursors[0]).toBeNull();
    expect(cursors[1]).toEqual({ file: "perch.2026-03-01.log", offset: 100, servers: {} });
    expect(within(log).getAllByRole("listitem")).toHaveLength(4);

    await userEvent.click(screen.getByRole("button", { name: "Open log folder" }));
    expect(calls.some((c) => c.cmd === "logs_open_folder")).toBe(true);
  });

  it("saves diagnostics, says where and what was removed, and shows it in its folder", async () => {
    setup();
    let release: (saved: DiagnosticsSaved) => void = () => {};
    onCommand("diagnostics_save", () => new Promise<DiagnosticsSaved>((resolve) => (release = resolve)));
    onCommand("diagnostics_reveal", () => null);

    await userEvent.click(screen.getByRole("checkbox", { name: "Hide my home folder path" }));
    await userEvent.click(screen.getByRole("button", { name: "Save diagnostics" }));
    expect(calls.find((c) => c.cmd === "diagnostics_save")?.args).toEqual({ redactHome: true });
    expect(screen.getByRole("button", { name: "Saving…" })).toBeDisabled();
    expect(screen.getByRole("status")).toHaveTextContent("gathering the logs");

    release(SAVED);
    const saved = await screen.findByRole("status", { name: "Diagnostics saved" });
    expect(saved).toHaveTextContent("perch-diagnostics-20260301-100001.zip");
    expect(saved).toHaveTextContent("12.3 kB");
    expect(saved).toHaveTextContent("Removed: 3 stored or environment secrets, 1 authorization header.");

    await userEvent.click(within(saved).getByRole("button", { name: "Show in folder" }));
    expect(calls.find((c) => c.cmd === "diagnostics_reveal")?.args).toEqual({ path: SAVED.path });
  });

  it("says why a bundle could not be saved and what to do", async () => {
    setup();
    onCommand("diagnostics_save", () => {
      throw { kind: "storage", message: "could not use /home/me/Downloads/x.zip.part: No space left on device" };
    });
    await userEvent.click(screen.getByRole("button", { name: "Save diagnostics" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("The diagnostics could not be saved: could not use");
    expect(alert).toHaveTextContent("the disk has room");
    expect(screen.getByRole("button", { name: "Save diagnostics" })).toBeEnabled();
  });
});
