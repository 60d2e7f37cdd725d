// Moving the frameless window by dragging a part of it (the title bar, the mini bubble).
//
// The window manager's move starts only once the pointer has moved a few pixels with the
// button held. Starting it on the press itself (as `data-tauri-drag-region` does) left the
// window glued to the pointer after a plain click under openbox: the move began after the
// button was already up, and ended only at the next click.
import { useRef, type PointerEvent } from "react";
import { getCurrentWindow } from "@tauri-apps/api/window";

/** A press that moves further than this (in pixels) drags; a shorter one is a click. */
export const DRAG_THRESHOLD = 4;

interface Press {
  x: number;
  y: number;
  dragging: boolean;
}

/** Pointer handlers that move the window when the pointer is dragged from the element;
 * `onClick` runs for a press that did not move. `from` says which presses may drag (not one on
 * a button inside the title bar). */
export function useDragToMove(onClick?: () => void, from: (target: Element) => boolean = () => true) {
  const press = useRef<Press | null>(null);
  return {
    onPointerDown: (e: PointerEvent<HTMLElement>) => {
      if (e.button !== 0 || !from(e.target as Element)) return;
      press.current = { x: e.screenX, y: e.screenY, dragging: false };
      // Moves keep arriving when the pointer leaves the element before the threshold.
      e.currentTarget.setPointerCapture?.(e.pointerId);
    },
    onPointerMove: (e: PointerEvent<HTMLElement>) => {
      const p = press.current;
      if (!p || p.dragging) return;
      if (Math.hypot(e.screenX - p.x, e.screenY - p.y) > DRAG_THRESHOLD) {
        p.dragging = true;
        void getCurrentWindow().startDragging();
      }
    },
    onPointerUp: () => {
      const p = press.current;
      press.current = null;
      if (p && !p.dragging) onClick?.();
    },
    onPointerCancel: () => {
      press.current = null;
    },
  };
}
