import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { I18nProvider } from "@lingui/react";
import App from "./App";
import { commands } from "./ipc";
import { activateLanguage, i18n, matchLanguage } from "./i18n";
import "./styles.css";

// The page starts in the chosen language, else the system's (as the engine reads it, so the
// model is told the same one), else the webview's.
async function start() {
  const asked = await commands.uiLanguage().catch(() => null);
  const chosen = asked?.status === "ok" ? [asked.data.chosen, asked.data.system] : [];
  await activateLanguage(matchLanguage([...chosen, navigator.language]));
  createRoot(document.getElementById("root")!).render(
    <StrictMode>
      <I18nProvider i18n={i18n}>
        <App />
      </I18nProvider>
    </StrictMode>,
  );
  // Two frames later the first paint is on screen; the shell logs it for the start-up benchmark.
  requestAnimationFrame(() => requestAnimationFrame(() => void commands.uiReady(performance.now()).catch(() => {})));
}
void start();
