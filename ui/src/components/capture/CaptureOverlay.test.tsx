import { beforeEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "../../test/render";
import type { OverlayInfo } from "../../bindings";
import { CaptureOverlay, windowBox } from "./CaptureOverlay";
import { calls, clearMocks, onCommand } from "../../test/tauri";

const INFO: OverlayInfo = {
  mode: "precision",
  monitor: { id: "RIGHT", name: "RIGHT", rect: { x: 1920, y: 0, width: 3840, height: 2160 }, scale: 2, primary: false },
  windows: [
    { id: 7, title: "Editor", app: "code", rect: { x: 1820, y: 100, width: 1000, height: 800 }, focused: true, pid: 10 },
    { id: 8, title: "Elsewhere", app: "x", rect: { x: 0, y: 0, width: 500, height: 500 }, focused: false, pid: 11 },
  ],
  preview: "data:image/jpeg;base64,CCCC",
};

function overlay(info: OverlayInfo, dpr = 2) {
  window.devicePixelRatio = dpr;
  onCommand("capture_overlay_info", () => info);
  onCommand("capture_overlay_take", () => ({}));
  onCommand("capture_overlay_cancel", () => null);
  return render(<CaptureOverlay index={1} />);
}

describe("CaptureOverlay", () => {
  beforeEach(() => clearMocks());

  it("places windows on its monitor in CSS pixels, cut at the monitor's edge", () => {
    expect(windowBox(INFO, INFO.windows[0], 2)).toEqual({ x: 0, y: 50, width: 450, height: 400 });
    expect(windowBox(INFO, INFO.windows[1], 2)).toBeNull();
  });

  it("shows the frozen screen, shows the size while dragging, and takes the region on release", async () => {
    overlay(INFO);
    const surface = await screen.findByTestId("capture-overlay");
    expect(await screen.findByRole("status")).toHaveTextContent("Esc cancels");
    expect(surface.querySelector("img")).toHaveAttribute("src", INFO.preview);
    fireEvent.pointerDown(surface, { button: 0, clientX: 300, clientY: 200, pointerId: 1 });
    fireEvent.pointerMove(surface, { clientX: 100, clientY: 150, pointerId: 1 });
    // Dragged up and left, 200 x 50 CSS pixels on a 2x monitor: 400 x 100 real pixels.
    expect(screen.getByText("400 x 100")).toBeInTheDocument();
    // Released further on than the last move the page drew: the release point counts.
    fireEvent.pointerUp(surface, { clientX: 80, clientY: 120, pointerId: 1 });
    const take = calls.find((c) => c.cmd === "capture_overlay_take")!;
    expect(take.args.pick).toEqual({
      kind: "region",
      monitor: 1,
      selection: { x: 80, y: 120, width: 220, height: 80 },
      css_scale: 2,
    });
  });

  it("a click is not a region, and Esc cancels", async () => {
    overlay(INFO);
    const surface = await screen.findByTestId("capture-overlay");
    fireEvent.pointerDown(surface, { button: 0, clientX: 10, clientY: 10, pointerId: 1 });
    fireEvent.pointerUp(surface, { clientX: 10, clientY: 10, pointerId: 1 });
    expect(calls.some((c) => c.cmd === "capture_overlay_take")).toBe(false);
    fireEvent.keyDown(window, { key: "Escape" });
    expect(calls.filter((c) => c.cmd === "capture_overlay_cancel")).toHaveLength(1);
  });

  it("in window mode, outlines the window under the pointer and a click takes it", async () => {
    overlay({ ...INFO, mode: "window" });
    const surface = await screen.findByTestId("capture-overlay");
    await screen.findByRole("status");
    fireEvent.pointerMove(surface, { clientX: 100, clientY: 100 });
    expect(screen.getByText("Editor")).toBeInTheDocument();
    fireEvent.pointerDown(surface, { button: 0, clientX: 100, clientY: 100 });
    expect(calls.find((c) => c.cmd === "capture_overlay_take")!.args.pick).toEqual({ kind: "window", id: 7 });
  });
});
