import { NavLink, useLocation, useNavigate } from "react-router";
import { msg } from "@lingui/core/macro";
import { useLingui } from "@lingui/react/macro";
import { commands } from "../ipc";
import { attempt, reportFailure } from "../lib/failures";
import { SHORTCUTS, lastConversation } from "../lib/shortcuts";
import { useDragToMove } from "../lib/dragToMove";
import { ChatIcon, CloseIcon, HistoryIcon, MiniIcon, NewChatIcon, ReviewIcon, SettingsIcon } from "./Icons";

const PAGES = [
  { to: "/", label: msg`Chat`, icon: <ChatIcon /> },
  { to: "/history", label: msg`History`, icon: <HistoryIcon /> },
  { to: "/review", label: msg`Review`, icon: <ReviewIcon /> },
  { to: "/settings", label: msg`Settings`, icon: <SettingsIcon /> },
];

/** How long after the window comes back from the bubble Close ignores clicks: the bubble sits
 * where the window's corner buttons return, so a double click on it would land on Close. */
export const SETTLE_MS = 600;

/** When the window last came back from the bubble (`performance.now()`). */
export const restored = { at: Number.NEGATIVE_INFINITY };

/** Said once, on the first Close without a tray: where Perch went and how to quit. */
export const NO_TRAY_SAID = "perch.no-tray-said";

// eslint-disable-next-line lingui/no-unlocalized-strings -- a CSS selector
const notAControl = (target: Element) => !target.closest("button, a");

/** The frameless window's title bar: drag anywhere that is not a button. */
export function TitleBar({ tray = true }: { tray?: boolean }) {
  const { t } = useLingui();
  const { newChat: newChatKey, mini: miniKey, quit: quitKey } = SHORTCUTS;
  const settled = () => performance.now() - restored.at > SETTLE_MS;
  // With no tray to close into, Close shrinks Perch to its bubble, which stays in reach.
  const close = () => {
    if (tray) return attempt(t`Could not close the window to the tray`, commands.hideWindow());
    if (!localStorage.getItem(NO_TRAY_SAID)) {
      localStorage.setItem(NO_TRAY_SAID, "1");
      reportFailure(
        t`No system tray here`,
        t`This desktop shows no tray icons, so Close shrinks Perch to its bubble instead of hiding it. Quit with ${quitKey}.`,
      );
    }
    return attempt(t`Could not switch to mini mode`, commands.setWindowMode("mini"));
  };
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const onChat = pathname === "/" || pathname.startsWith("/chat/");
  // Dragged anywhere that is not one of its buttons.
  const drag = useDragToMove(undefined, notAControl);
  return (
    <header className="titlebar" {...drag}>
      <span className="brand">
        <img src="/perch.png" alt="" width={16} height={16} draggable={false} />
        {/* eslint-disable-next-line lingui/no-unlocalized-strings -- the product's name */}
        {"Perch"}
      </span>
      <nav className="tabs" aria-label={t`Pages`}>
        <button
          type="button"
          className="tab"
          aria-label={t`New chat`}
          title={t`New chat (${newChatKey})`}
          onClick={() => navigate("/")}
        >
          <NewChatIcon />
        </button>
        {PAGES.map((page) => (
          <NavLink
            key={page.to}
            // Chat returns to the conversation that was open.
            to={page.to === "/" ? (lastConversation.id ? `/chat/${lastConversation.id}` : "/") : page.to}
            end
            className={({ isActive }) => (isActive || (page.to === "/" && onChat) ? "tab active" : "tab")}
            aria-label={t(page.label)}
            title={t(page.label)}
          >
            {page.icon}
          </NavLink>
        ))}
      </nav>
      <div className="window-buttons">
        <button
          type="button"
          className="icon-button"
          aria-label={t`Mini mode`}
          title={t`Mini mode (${miniKey})`}
          onClick={() => void attempt(t`Could not switch to mini mode`, commands.setWindowMode("mini"))}
        >
          <MiniIcon />
        </button>
        <button
          type="button"
          className="icon-button close"
          aria-label={tray ? t`Close to tray` : t`Close to the bubble`}
          title={tray ? t`Close to tray (quit with ${quitKey})` : t`Close to the bubble: this desktop has no tray (quit with ${quitKey})`}
          onClick={() => settled() && void close()}
        >
          <CloseIcon />
        </button>
      </div>
    </header>
  );
}
