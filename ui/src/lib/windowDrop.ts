// Files dropped on the window. Tauri takes the drop (with the files' paths) before the page
// sees it, so the page's own drop events never carry them.
import { useEffect, useRef, useState } from "react";
import { getCurrentWebview } from "@tauri-apps/api/webview";

/** Calls `onDrop` with the paths of files dropped on the window; true while files are dragged
 * over it. */
export function useWindowDrop(onDrop: (paths: string[]) => void): boolean {
  const [over, setOver] = useState(false);
  const latest = useRef(onDrop);
  useEffect(() => {
    latest.current = onDrop;
  }, [onDrop]);
  useEffect(() => {
    let off: (() => void) | null = null;
    let live = true;
    // Outside Tauri (a plain browser) there is no webview to ask: nothing to listen to.
    Promise.resolve()
      .then(() =>
        getCurrentWebview().onDragDropEvent((e) => {
          const drag = e.payload;
          if (drag.type === "enter" || drag.type === "over") {
            setOver(true);
            return;
          }
          setOver(false);
          if (drag.type === "drop" && drag.paths.length > 0) latest.current(drag.paths);
        }),
      )
      .then(
        (unlisten) => (live ? (off = unlisten) : unlisten()),
        () => {},
      );
    return () => {
      live = false;
      off?.();
    };
  }, []);
  return over;
}
