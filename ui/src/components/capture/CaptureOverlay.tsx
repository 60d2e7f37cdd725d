import { useCallback, useEffect, useRef, useState, type PointerEvent } from "react";
import { useLingui } from "@lingui/react/macro";
import type { OverlayInfo, WindowInfo } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { formatNumber } from "../../lib/format";

/** A rectangle in this overlay's CSS pixels. */
interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Where a desktop-pixel window sits on this overlay, in CSS pixels; null when off it. */
export function windowBox(info: OverlayInfo, w: WindowInfo, scale: number): Box | null {
  const m = info.monitor.rect;
  const left = Math.max(w.rect.x, m.x);
  const top = Math.max(w.rect.y, m.y);
  const right = Math.min(w.rect.x + w.rect.width, m.x + m.width);
  const bottom = Math.min(w.rect.y + w.rect.height, m.y + m.height);
  if (right <= left || bottom <= top) return null;
  return { x: (left - m.x) / scale, y: (top - m.y) / scale, width: (right - left) / scale, height: (bottom - top) / scale };
}

/** A drag can go up or left; the frame is the same either way. */
function normalise(s: Box): Box {
  return {
    x: Math.min(s.x, s.x + s.width),
    y: Math.min(s.y, s.y + s.height),
    width: Math.abs(s.width),
    height: Math.abs(s.height),
  };
}

/**
 * One monitor's overlay: its frozen picture, dimmed. Precision mode: drag a rectangle (its size
 * in real pixels shown), release or Enter takes it. Window mode: the window under the pointer is
 * outlined, a click takes it. Esc cancels on every monitor.
 */
export function CaptureOverlay({ index }: { index: number }) {
  const { t } = useLingui();
  const [info, setInfo] = useState<OverlayInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [drag, setDrag] = useState<Box | null>(null);
  const [hover, setHover] = useState<WindowInfo | null>(null);
  const done = useRef(false);
  const scale = window.devicePixelRatio || 1;

  useEffect(() => {
    call(commands.captureOverlayInfo(index)).then(setInfo, (e) => setError(errorMessage(e)));
  }, [index]);

  const cancel = useCallback(() => {
    if (done.current) return;
    done.current = true;
    // A failed cancel leaves the overlay up: say so, and let Esc try again.
    call(commands.captureOverlayCancel()).catch((e) => {
      done.current = false;
      setError(errorMessage(e));
    });
  }, []);

  const takeRegion = useCallback(
    (selection: Box) => {
      if (done.current) return;
      const box = normalise(selection);
      if (box.width < 2 || box.height < 2) return; // a click, not a drag
      done.current = true;
      call(commands.captureOverlayTake({ kind: "region", monitor: index, selection: box, css_scale: scale })).catch((e) => {
        done.current = false;
        setError(errorMessage(e));
      });
    },
    [index, scale],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") cancel();
      else if (e.key === "Enter" && drag) takeRegion(drag);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [cancel, drag, takeRegion]);

  const windowAt = (x: number, y: number) =>
    info?.windows.find((w) => {
      const box = windowBox(info, w, scale);
      return box && x >= box.x && y >= box.y && x < box.x + box.width && y < box.y + box.height;
    }) ?? null;

  const windowMode = info?.mode === "window";
  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    if (!info || e.button !== 0) return;
    if (windowMode) {
      const w = windowAt(e.clientX, e.clientY);
      if (w && !done.current) {
        done.current = true;
        call(commands.captureOverlayTake({ kind: "window", id: w.id })).catch((err) => {
          done.current = false;
          setError(errorMessage(err));
        });
      }
      return;
    }
    // The drag keeps reporting past the window edge (jsdom has no pointer capture).
    e.currentTarget.setPointerCapture?.(e.pointerId);
    setDrag({ x: e.clientX, y: e.clientY, width: 0, height: 0 });
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    if (windowMode) setHover(windowAt(e.clientX, e.clientY));
    else if (drag) setDrag({ ...drag, width: e.clientX - drag.x, height: e.clientY - drag.y });
  };
  // The release point, not the last rendered move: under load the last pointermove may not
  // have re-rendered yet, and the region would come out short.
  const onPointerUp = (e: PointerEvent<HTMLDivElement>) => {
    if (drag) takeRegion({ ...drag, width: e.clientX - drag.x, height: e.clientY - drag.y });
  };

  const box = drag ? normalise(drag) : hover && info ? windowBox(info, hover, scale) : null;
  const className = ["capture-overlay", box ? "selecting" : "", windowMode ? "window-mode" : ""].join(" ");
  // The selection's size in real pixels ("1920 x 1080", no grouping, as screen sizes are written).
  const width = box ? formatNumber(Math.round(box.width * scale), { useGrouping: false }) : "";
  const height = box ? formatNumber(Math.round(box.height * scale), { useGrouping: false }) : "";
  return (
    <div
      className={className}
      data-testid="capture-overlay"
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onContextMenu={(e) => {
        e.preventDefault();
        cancel();
      }}
    >
      {info && <img src={info.preview} alt="" draggable={false} />}
      <div className="dim" />
      {box && (
        <>
          <div className="frame" style={{ left: box.x, top: box.y, width: box.width, height: box.height }} />
          <div className="size" style={{ left: box.x, top: Math.max(0, box.y - 22) }}>
            {hover && windowMode
              ? hover.title || hover.app
              : t({ message: `${width} x ${height}`, comment: "a region's size in pixels: width x height" })}
          </div>
        </>
      )}
      {!box && (
        <div className="hint" role="status">
          {error ?? (windowMode ? t`Click a window to capture it · Esc cancels` : t`Drag to capture a region · Enter or release takes it · Esc cancels`)}
        </div>
      )}
    </div>
  );
}
