import { NavLink } from "react-router";
import { commands } from "../ipc";
import { SHORTCUTS } from "../lib/shortcuts";
import { ChatIcon, CloseIcon, HistoryIcon, MiniIcon, ReviewIcon, SettingsIcon } from "./Icons";

const PAGES = [
  { to: "/", label: "Chat", icon: <ChatIcon /> },
  { to: "/history", label: "History", icon: <HistoryIcon /> },
  { to: "/review", label: "Review", icon: <ReviewIcon /> },
  { to: "/settings", label: "Settings", icon: <SettingsIcon /> },
];

/** The frameless window's title bar: drag anywhere that is not a button. */
export function TitleBar() {
  return (
    <header className="titlebar" data-tauri-drag-region>
      <span className="brand" data-tauri-drag-region>
        <img src="/perch.png" alt="" width={16} height={16} data-tauri-drag-region />
        Perch
      </span>
      <nav className="tabs" aria-label="Pages">
        {PAGES.map((page) => (
          <NavLink
            key={page.to}
            to={page.to}
            end
            className={({ isActive }) => (isActive ? "tab active" : "tab")}
            aria-label={page.label}
            title={page.label}
          >
            {page.icon}
          </NavLink>
        ))}
      </nav>
      <div className="window-buttons">
        <button
          type="button"
          className="icon-button"
          aria-label="Mini mode"
          title={`Mini mode (${SHORTCUTS.mini})`}
          onClick={() => void commands.setWindowMode("mini")}
        >
          <MiniIcon />
        </button>
        <button
          type="button"
          className="icon-button close"
          aria-label="Close to tray"
          title={`Close to tray (quit with ${SHORTCUTS.quit})`}
          onClick={() => void commands.hideWindow()}
        >
          <CloseIcon />
        </button>
      </div>
    </header>
  );
}
