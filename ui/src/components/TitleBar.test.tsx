import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "../test/render";
import { MemoryRouter } from "react-router";
import { TitleBar } from "./TitleBar";
import { calls } from "../test/tauri";

function titleBar() {
  render(
    <MemoryRouter>
      <TitleBar />
    </MemoryRouter>,
  );
  return screen.getByRole("banner");
}

describe("moving the window by its title bar", () => {
  it("a plain click on the bar starts no move (the window must not follow the pointer after it)", () => {
    const bar = titleBar();
    fireEvent.pointerDown(bar, { button: 0, screenX: 100, screenY: 10 });
    fireEvent.pointerMove(bar, { screenX: 102, screenY: 11 });
    fireEvent.pointerUp(bar);
    expect(calls.filter((c) => c.cmd === "startDragging")).toEqual([]);
  });

  it("a press that moves drags the window, once", () => {
    const bar = titleBar();
    fireEvent.pointerDown(bar, { button: 0, screenX: 100, screenY: 10 });
    fireEvent.pointerMove(bar, { screenX: 120, screenY: 14 });
    fireEvent.pointerMove(bar, { screenX: 160, screenY: 30 });
    fireEvent.pointerUp(bar);
    expect(calls.filter((c) => c.cmd === "startDragging")).toHaveLength(1);
  });

  it("a press on one of its buttons never drags", () => {
    titleBar();
    const settings = screen.getByRole("link", { name: "Settings" });
    fireEvent.pointerDown(settings, { button: 0, screenX: 100, screenY: 10 });
    fireEvent.pointerMove(settings, { screenX: 140, screenY: 30 });
    expect(calls.filter((c) => c.cmd === "startDragging")).toEqual([]);
  });
});
