import { useEffect, useState } from "react";
import { Trans } from "@lingui/react/macro";
import type { OnTop } from "../../bindings";
import { commands } from "../../ipc";

/** A line of sway's config (README's rule). */
const SWAY_RULE = 'for_window [app_id="perch-desktop"] floating enable, sticky enable';

/** Settings -> General: whether Perch's window stays above the others on this desktop, and
 * where it cannot keep itself there (Wayland), the desktop's own way to do it. */
export function WindowOnTop() {
  const [onTop, setOnTop] = useState<OnTop | null>(null);
  useEffect(() => {
    void commands.desktopStatus().then((d) => setOnTop(d.on_top), () => {});
  }, []);
  if (onTop === null) return null;
  return (
    <p className={onTop === "kept" ? "muted small" : "note small"} data-testid="window-on-top">
      {onTop === "kept" && <Trans>Always on top: in effect, Perch stays above your other windows.</Trans>}
      {onTop === "gnome_window_menu" && (
        <Trans>
          Always on top: not in effect, GNOME lets no app keep itself on top. Press Alt+Space in Perch&apos;s window
          and choose Always on Top.
        </Trans>
      )}
      {onTop === "sway_rule" && (
        <Trans>
          Always on top: sway keeps floating windows above tiled ones. Add <code>{SWAY_RULE}</code> to your sway
          config, then run <code>swaymsg reload</code>.
        </Trans>
      )}
      {onTop === "kde_window_menu" && (
        <Trans>
          Always on top: not in effect, KDE lets no app keep itself on top on Wayland. Press Alt+F3 in Perch&apos;s
          window and choose More Actions → Keep Above Others.
        </Trans>
      )}
      {onTop === "desktop_decides" && (
        <Trans>
          Always on top: not in effect, this Wayland desktop decides which window is on top. If its window menu
          has an Always on Top entry, turn it on there.
        </Trans>
      )}
    </p>
  );
}
