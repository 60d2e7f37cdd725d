import { describe, expect, it } from "vitest";
import { render, screen, within } from "../test/render";
import userEvent from "@testing-library/user-event";
import { ShortcutSheet, openShortcutSheet } from "./ShortcutSheet";
import { act } from "react";
import { onCommand } from "../test/tauri";

describe("ShortcutSheet", () => {
  it("opens with ?, keeps the focus inside, and gives it back on Esc", async () => {
    render(
      <>
        <button type="button">Before</button>
        <ShortcutSheet />
      </>,
    );
    const before = screen.getByRole("button", { name: "Before" });
    before.focus();
    await userEvent.keyboard("?");
    const dialog = screen.getByRole("dialog", { name: "Keyboard shortcuts" });
    expect(dialog).toHaveAttribute("aria-modal", "true");
    expect(within(dialog).getByRole("button", { name: "Close" })).toHaveFocus();
    expect(within(dialog).getByRole("region", { name: "In the chat" })).toHaveTextContent("Shift+EnterNew line");
    // Tab goes round inside: the close button, the list, the close button again.
    await userEvent.tab();
    expect(within(dialog).getByLabelText("Shortcuts")).toHaveFocus();
    await userEvent.tab();
    expect(within(dialog).getByRole("button", { name: "Close" })).toHaveFocus();
    await userEvent.tab({ shift: true });
    expect(within(dialog).getByLabelText("Shortcuts")).toHaveFocus();
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(before).toHaveFocus();
  });

  it("is a question mark, not a command, in a text field", async () => {
    render(
      <>
        <textarea aria-label="Message" />
        <ShortcutSheet />
      </>,
    );
    await userEvent.type(screen.getByRole("textbox", { name: "Message" }), "Why?");
    expect(screen.getByRole("textbox", { name: "Message" })).toHaveValue("Why?");
    expect(screen.queryByRole("dialog")).toBeNull();
    act(() => openShortcutSheet());
    expect(screen.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeInTheDocument();
  });

  it("lists every global shortcut with the keys it has now", async () => {
    const status = (name: string, accelerator: string, assigned: string | null = null) => ({ name, accelerator, active: true, problem: null, assigned });
    onCommand("shortcut_statuses", () => [
      status("screenshot", "Alt+Period"),
      status("screenshot_window", "Alt+Shift+Period", "Super+S"),
      status("selection", "Ctrl+Alt+E"),
    ]);
    onCommand("voice_shortcut_statuses", () => [status("push_to_talk", ""), status("dictate_anywhere", "Ctrl+Alt+D")]);
    render(<ShortcutSheet />);
    act(() => openShortcutSheet());
    const outside = await screen.findByRole("region", { name: "Outside Perch (set in Settings)" });
    // The portal's own key for the window shortcut, the user's empty push-to-talk as off.
    await within(outside).findByText("Super+S");
    expect(outside).toHaveTextContent("Alt+.Screenshot into the chat");
    expect(outside).toHaveTextContent("Super+SScreenshot of the focused window");
    expect(outside).toHaveTextContent("Ctrl+Alt+ESelected text into the chat");
    expect(outside).toHaveTextContent("OffPush to talk");
    expect(outside).toHaveTextContent("Ctrl+Alt+DDictate into the focused app");
  });
});
