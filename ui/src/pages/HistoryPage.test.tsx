import { describe, expect, it } from "vitest";
import { render as renderDom, screen, within } from "../test/render";
import type { ReactElement } from "react";
import { MemoryRouter } from "react-router";
import userEvent from "@testing-library/user-event";
import { HistoryPage } from "./HistoryPage";
import { calls, onCommand } from "../test/tauri";
import { conversation } from "../test/fixtures";

const render = (ui: ReactElement) => renderDom(<MemoryRouter>{ui}</MemoryRouter>);
const now = Date.now();
const DAY = 24 * 3600 * 1000;

describe("HistoryPage", () => {
  it("says when there is no history yet", async () => {
    onCommand("history_list", () => []);
    render(<HistoryPage />);
    expect(await screen.findByText("No conversations yet")).toBeInTheDocument();
  });

  it("groups conversations by day, newest first", async () => {
    onCommand("history_list", () => [
      conversation("1", "Borrow checker", now),
      conversation("2", "", now - 40 * DAY),
    ]);
    render(<HistoryPage />);
    const today = await screen.findByRole("region", { name: "Today" });
    expect(within(today).getByText("Borrow checker")).toBeInTheDocument();
    expect(screen.getByText("Untitled")).toBeInTheDocument();
    expect(screen.getAllByRole("heading", { level: 2 })).toHaveLength(2);
  });

  it("searches once typing settles and highlights the matches", async () => {
    onCommand("history_list", () => [conversation("1", "Borrow checker", now)]);
    onCommand("history_search", ({ query }) => [
      {
        conversation_id: "1",
        title: "Borrow checker",
        message_id: 7,
        role: "assistant",
        snippet: `a mutable reference \u0002${query}\u0003 its scope`,
        created_at: now,
      },
    ]);
    render(<HistoryPage />);
    await userEvent.type(screen.getByRole("searchbox", { name: "Search history" }), "outlives");
    const mark = await screen.findByText("outlives", { selector: "mark" });
    expect(mark).toBeInTheDocument();
    const searches = calls.filter((c) => c.cmd === "history_search");
    expect(searches).toEqual([{ cmd: "history_search", args: { query: "outlives", limit: 50 } }]);
  });

  it("deletes a conversation only when asked twice, and Keep leaves it", async () => {
    onCommand("history_list", () => [conversation("1", "Borrow checker", now)]);
    onCommand("history_delete", () => null);
    render(<HistoryPage />);
    await userEvent.click(await screen.findByRole("button", { name: "Delete Borrow checker" }));
    expect(screen.queryByRole("button", { name: "Rename Borrow checker" })).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Keep" }));
    expect(screen.getByRole("button", { name: "Rename Borrow checker" })).toBeInTheDocument();
    expect(calls.filter((c) => c.cmd === "history_delete")).toEqual([]);
    await userEvent.click(screen.getByRole("button", { name: "Delete Borrow checker" }));
    await userEvent.click(screen.getByRole("button", { name: "Delete" }));
    expect(calls.filter((c) => c.cmd === "history_delete")).toEqual([{ cmd: "history_delete", args: { id: "1" } }]);
  });

  it("says so when nothing matches", async () => {
    onCommand("history_list", () => []);
    onCommand("history_search", () => []);
    render(<HistoryPage />);
    await userEvent.type(screen.getByRole("searchbox"), "zebra");
    expect(await screen.findByText("Nothing matches “zebra”.")).toBeInTheDocument();
  });

  it("shows a readable error when history cannot be read", async () => {
    onCommand("history_list", () => {
      throw { kind: "storage", message: "database error: disk I/O error" };
    });
    render(<HistoryPage />);
    expect(await screen.findByRole("alert")).toHaveTextContent("disk I/O error");
  });
});
