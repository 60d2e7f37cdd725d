import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/react";
import { MiniBubble } from "./MiniBubble";
import { calls, onCommand } from "../test/tauri";

describe("MiniBubble", () => {
  it("restores the window on a click", () => {
    onCommand("set_window_mode", () => null);
    render(<MiniBubble />);
    const bubble = screen.getByRole("button", { name: "Open Perch" });
    fireEvent.pointerDown(bubble, { button: 0, screenX: 10, screenY: 10 });
    fireEvent.pointerUp(bubble);
    expect(calls).toEqual([{ cmd: "set_window_mode", args: { mode: "normal" } }]);
  });

  it("drags the window instead when the pointer moves", () => {
    onCommand("set_window_mode", () => null);
    render(<MiniBubble />);
    const bubble = screen.getByRole("button", { name: "Open Perch" });
    fireEvent.pointerDown(bubble, { button: 0, screenX: 10, screenY: 10 });
    fireEvent.pointerMove(bubble, { screenX: 30, screenY: 25 });
    fireEvent.pointerUp(bubble);
    expect(calls.map((c) => c.cmd)).toEqual(["startDragging"]);
  });
});
