import { describe, expect, it } from "vitest";
import { render, screen } from "../test/render";
import userEvent from "@testing-library/user-event";
import { ReviewSettingsCard } from "./ReviewSettingsCard";
import { SettingsProvider } from "../lib/settings";
import { calls, onCommand } from "../test/tauri";
import { SETTINGS, healthyApp } from "../test/fixtures";

describe("ReviewSettingsCard", () => {
  it("saves each change and shows where the socket listens", async () => {
    healthyApp();
    let settings = SETTINGS;
    onCommand("set_review_settings", ({ review }) => (settings = { ...settings, review: review as typeof settings.review }));
    onCommand("get_settings", () => settings);
    onCommand("review_socket_status", () => ({ path: "/run/user/1000/perch/review.sock", error: null }));
    render(
      <SettingsProvider>
        <ReviewSettingsCard />
      </SettingsProvider>,
    );
    expect(await screen.findByText("Listening at /run/user/1000/perch/review.sock")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("checkbox", { name: "Show Perch when a review arrives" }));
    const editor = screen.getByRole("textbox", { name: "Editor command" });
    await userEvent.type(editor, "zed {{file}:{{line}{Enter}");
    const saved = calls.filter((c) => c.cmd === "set_review_settings").map((c) => c.args.review as typeof SETTINGS.review);
    expect(saved[0].auto_show).toBe(false);
    expect(saved.at(-1)!.editor_command).toBe("zed {file}:{line}");
  });

  it("says why the socket is not running", async () => {
    healthyApp();
    onCommand("review_socket_status", () => ({ path: null, error: "another Perch is already serving reviews at /run/x" }));
    render(
      <SettingsProvider>
        <ReviewSettingsCard />
      </SettingsProvider>,
    );
    expect(await screen.findByText(/another Perch is already serving reviews/)).toBeInTheDocument();
  });
});
