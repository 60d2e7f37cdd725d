import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "../test/render";
import { MemoryRouter } from "react-router";
import userEvent from "@testing-library/user-event";
import { SettingsPage } from "./SettingsPage";
import { SettingsProvider } from "../lib/settings";
import { calls, onCommand } from "../test/tauri";
import { STATUS, healthyApp } from "../test/fixtures";

/** The page as the app shows it, at `path` (Settings reads the section from its address). */
function renderSettings(path = "/settings") {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <SettingsProvider>
        <SettingsPage status={STATUS} />
      </SettingsProvider>
    </MemoryRouter>,
  );
}

describe("SettingsPage", () => {
  it("saves the theme and applies it to the page", async () => {
    healthyApp();
    renderSettings();
    const dark = await screen.findByRole("radio", { name: "Dark" });
    await userEvent.click(dark);
    expect(calls.filter((c) => c.cmd === "set_theme")).toEqual([{ cmd: "set_theme", args: { theme: "dark" } }]);
    // The theme applies once the save has answered, which under load is after the click returns.
    await waitFor(() => expect(screen.getByRole("radio", { name: "Dark" })).toBeChecked());
    await waitFor(() => expect(document.documentElement.dataset.theme).toBe("dark"));

    await userEvent.click(screen.getByRole("radio", { name: "System" }));
    await waitFor(() => expect(document.documentElement.dataset.theme).toBeUndefined());
  });

  it("sets when a hidden window frees its page, and keeps its own page while open", async () => {
    healthyApp();
    const { unmount } = renderSettings();
    const holds = () => calls.filter((c) => c.cmd === "page_holds_unsent").map((c) => c.args.holds);
    expect(holds()).toEqual([true]);
    const select = await screen.findByRole("combobox", { name: /Free the window's memory when hidden for/ });
    expect(select).toHaveValue("180");
    // It stays disabled until the settings have loaded (slow under load).
    await waitFor(() => expect(select).toBeEnabled());
    await userEvent.selectOptions(select, "Never");
    expect(calls.filter((c) => c.cmd === "set_hidden_settings").map((c) => c.args)).toEqual([
      // The rest of the hidden settings is sent as it was, not reset, with the copy it was
      // edited from.
      {
        base: { release_page_after_secs: 180, reload_grown_page_after_secs: 45 },
        hidden: { release_page_after_secs: 0, reload_grown_page_after_secs: 45 },
      },
    ]);
    expect(select).toHaveValue("0");
    unmount();
    expect(holds()).toEqual([true, false]);
  });

  it("shows where data lives", async () => {
    healthyApp();
    renderSettings();
    expect(screen.getByText(STATUS.data_dir!)).toBeInTheDocument();
    expect(screen.getByText("version 2")).toBeInTheDocument();
  });

  it("says when a setting could not be saved", async () => {
    healthyApp();
    onCommand("set_theme", () => {
      throw { kind: "storage", message: "database is locked" };
    });
    renderSettings();
    await userEvent.click(await screen.findByRole("radio", { name: "Light" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("database is locked");
  });

  it("opens the section a link names", async () => {
    healthyApp();
    onCommand("logs_tail", () => ({ entries: [], cursor: null }));
    onCommand("crash_reports", () => []);
    renderSettings("/settings?section=Logs");
    expect(await screen.findByRole("tab", { name: "Logs", selected: true })).toBeInTheDocument();
    expect(screen.getByRole("tab", { name: "General" })).toHaveAttribute("aria-selected", "false");
  });

  it("opens another tab at its top, not at the depth the last one was scrolled to", async () => {
    healthyApp();
    render(
      <MemoryRouter initialEntries={["/settings"]}>
        <SettingsProvider>
          <main className="page">
            <SettingsPage status={STATUS} />
          </main>
        </SettingsProvider>
      </MemoryRouter>,
    );
    await screen.findByRole("tab", { name: "General", selected: true });
    const page = screen.getByRole("main");
    page.scrollTop = 600;
    await userEvent.click(screen.getByRole("tab", { name: "Models" }));
    expect(page.scrollTop).toBe(0);
    // The tab already open keeps the place being read.
    page.scrollTop = 200;
    await userEvent.click(screen.getByRole("tab", { name: "Models" }));
    expect(page.scrollTop).toBe(200);
  });

  it("moves between sections with the arrow keys, one Tab stop for the tabs", async () => {
    healthyApp();
    renderSettings();
    const general = await screen.findByRole("tab", { name: "General", selected: true });
    expect(screen.getAllByRole("tab").filter((t) => t.tabIndex === 0)).toEqual([general]);
    expect(screen.getByRole("tabpanel", { name: "General" })).toBeInTheDocument();
    general.focus();
    await userEvent.keyboard("{ArrowRight}");
    const models = screen.getByRole("tab", { name: "Models", selected: true });
    expect(models).toHaveFocus();
    expect(screen.getByRole("tabpanel", { name: "Models" })).toBeInTheDocument();
    await userEvent.keyboard("{ArrowLeft}{ArrowLeft}");
    expect(screen.getByRole("tab", { name: "Logs", selected: true })).toHaveFocus();
    await userEvent.keyboard("{Home}");
    expect(screen.getByRole("tab", { name: "General", selected: true })).toHaveFocus();
  });
});
