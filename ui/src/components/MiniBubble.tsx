import { useRef } from "react";
import { getCurrentWindow } from "@tauri-apps/api/window";
import { commands } from "../ipc";
import { SHORTCUTS } from "../lib/shortcuts";

// A press that moves further than this drags the bubble; a shorter one is a click.
const DRAG_THRESHOLD = 4;

/** Mini mode: a 52x52 bubble. Click to restore the window; drag to move it. */
export function MiniBubble() {
  const press = useRef<{ x: number; y: number; dragging: boolean } | null>(null);

  return (
    <button
      type="button"
      className="mini-bubble"
      aria-label="Open Perch"
      title={`Open Perch (${SHORTCUTS.mini})`}
      onPointerDown={(e) => {
        if (e.button === 0) press.current = { x: e.screenX, y: e.screenY, dragging: false };
      }}
      onPointerMove={(e) => {
        const p = press.current;
        if (!p || p.dragging) return;
        if (Math.hypot(e.screenX - p.x, e.screenY - p.y) > DRAG_THRESHOLD) {
          p.dragging = true;
          void getCurrentWindow().startDragging();
        }
      }}
      onPointerUp={() => {
        const p = press.current;
        press.current = null;
        if (p && !p.dragging) void commands.setWindowMode("normal");
      }}
      onKeyDown={(e) => {
        if (e.key === "Enter" || e.key === " ") void commands.setWindowMode("normal");
      }}
    >
      <img src="/perch.png" alt="" width={34} height={34} draggable={false} />
    </button>
  );
}
