import { useEffect, useState } from "react";
import { HashRouter } from "react-router";
import { useLingui } from "@lingui/react/macro";
import type { AppStatus, WindowMode } from "./bindings";
import { commands, events } from "./ipc";
import { Layout } from "./components/Layout";
import { restored } from "./components/TitleBar";
import { MiniBubble } from "./components/MiniBubble";
import { FatalScreen } from "./components/FatalScreen";
import { ErrorBoundary } from "./components/ErrorBoundary";
import { SettingsProvider } from "./lib/settings";
import { QuestionsProvider } from "./lib/questions";
import { TerminalProvider } from "./lib/terminal";
import { QuestionDialogs } from "./components/tools/QuestionDialogs";
import { AddServerLinks } from "./components/settings/AddServerLinks";
import { useGlobalShortcuts } from "./lib/shortcuts";
import { CaptureOverlay } from "./components/capture/CaptureOverlay";
import { DictationIndicator } from "./components/DictationIndicator";

declare global {
  interface Window {
    /** Set by the shell in an overlay window: the index of the monitor it covers. */
    __PERCH_OVERLAY__?: number;
    /** Set by the shell in the dictate-anywhere indicator's window. */
    __PERCH_INDICATOR__?: boolean;
  }
}

/** An overlay window (one per monitor while a region or window is picked) shows only itself. */
const overlay = window.__PERCH_OVERLAY__;

export default function App() {
  const { t } = useLingui();
  return (
    <ErrorBoundary title={t`Perch stopped working`}>
      {overlay !== undefined ? (
        <CaptureOverlay index={overlay} />
      ) : window.__PERCH_INDICATOR__ ? (
        <DictationIndicator />
      ) : (
        <MainApp />
      )}
    </ErrorBoundary>
  );
}

function MainApp() {
  const [status, setStatus] = useState<AppStatus | null>(null);
  const mode = useWindowMode();
  useGlobalShortcuts(mode);

  // Pages live in the URL hash, so a request from the tray or a review arriving is honoured even
  // while the bubble (not the router) is on screen.
  useEffect(() => {
    const unlisten = events.navigateRequested.listen((e) => {
      const route = e.payload.route;
      window.location.hash = route === "new_chat" ? "#/" : route === "logs" ? "#/settings?section=Logs" : `#/${route}`;
    });
    return () => void unlisten.then((off) => off());
  }, []);

  useEffect(() => {
    commands.appStatus().then(setStatus, (e) =>
      setStatus({
        version: "",
        fatal: String(e),
        data_dir: null,
        data_dir_source: null,
        schema_version: null,
        notices: [],
      }),
    );
  }, []);

  // What the desktop offers, asked once the window is drawn (the session bus may be slow):
  // until it answers, a tray and a compositor are assumed, as before it was asked at all.
  const [tray, setTray] = useState(true);
  useEffect(() => {
    void commands.desktopStatus().then((d) => {
      // Without a compositor transparent pixels are black: square corners, an opaque bubble.
      if (!d.composited) document.documentElement.dataset.composited = "no";
      setTray(d.tray);
    });
  }, []);

  if (!status) return null;
  if (status.fatal) return <FatalScreen message={status.fatal} />;
  // The bubble hears of questions too: an approval waiting shows as a badge on it.
  if (mode === "mini")
    return (
      <QuestionsProvider>
        <MiniBubble />
      </QuestionsProvider>
    );
  return (
    <SettingsProvider>
      <QuestionsProvider>
        <TerminalProvider>
          <HashRouter>
            <Layout status={status} tray={tray} />
          </HashRouter>
          <QuestionDialogs />
          <AddServerLinks />
        </TerminalProvider>
      </QuestionsProvider>
    </SettingsProvider>
  );
}

/** The window mode, kept in step with the shell (the button, the shortcut, the tray). */
function useWindowMode(): WindowMode {
  const [mode, setMode] = useState<WindowMode>("normal");
  useEffect(() => {
    let live = true;
    commands.getWindowMode().then((m) => live && setMode(m), () => {});
    const unlisten = events.windowModeChanged.listen((e) => {
      setMode((was) => {
        if (was === "mini" && e.payload.mode !== "mini") restored.at = performance.now();
        return e.payload.mode;
      });
    });
    return () => {
      live = false;
      void unlisten.then((off) => off());
    };
  }, []);
  return mode;
}
