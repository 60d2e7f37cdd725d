import { beforeEach, describe, expect, it } from "vitest";
import { render, screen } from "../../test/render";
import { clearMocks, onCommand } from "../../test/tauri";
import type { OnTop } from "../../bindings";
import { WindowOnTop } from "./WindowOnTop";

async function line(onTop: OnTop) {
  clearMocks();
  onCommand("desktop_status", () => ({ composited: true, tray: true, on_top: onTop }));
  const { unmount } = render(<WindowOnTop />);
  const text = (await screen.findByTestId("window-on-top")).textContent;
  unmount();
  return text;
}

describe("WindowOnTop", () => {
  beforeEach(() => clearMocks());

  it("says for each desktop whether Perch stays on top, and where not, the desktop's own way", async () => {
    expect(await line("kept")).toBe("Always on top: in effect, Perch stays above your other windows.");
    expect(await line("gnome_window_menu")).toMatch(/not in effect, GNOME .* Press Alt\+Space .* choose Always on Top\./);
    expect(await line("sway_rule")).toContain('Add for_window [app_id="perch-desktop"] floating enable, sticky enable to your sway config');
    expect(await line("kde_window_menu")).toMatch(/Press Alt\+F3 .* More Actions → Keep Above Others\./);
    expect(await line("desktop_decides")).toMatch(/not in effect, this Wayland desktop decides/);
  });
});
