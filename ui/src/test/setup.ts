import "@testing-library/jest-dom/vitest";
import { afterEach } from "vitest";
import { cleanup, configure } from "@testing-library/react";
import { clearMocks } from "./tauri";
import { resetConversation } from "../lib/conversation";
import { resetDictation } from "../lib/dictation";
import { resetFailures } from "../lib/failures";
import { resetSelection } from "../lib/selection";
import { resetSpeech } from "../lib/speech";
import { restored } from "../components/TitleBar";
import { i18n } from "../i18n";
import { messages } from "../locales/en.po";

// Components read their words from the English catalogue, as the app does in English.
i18n.loadAndActivate({ locale: "en", messages });

// The app loads the markdown renderer, and KaTeX, lazily. Load them once here, so no test's wait
// includes compiling them (over a second on a busy machine), and give waits room on slow machines.
await import("../components/Markdown");
await import("../components/markdownMath");
configure({ asyncUtilTimeout: 4000 });

afterEach(() => {
  // The catalogue test runs in Node, with no page to clean.
  if (typeof window === "undefined") return;
  cleanup();
  clearMocks();
  resetConversation();
  resetDictation();
  resetSpeech();
  resetFailures();
  resetSelection();
  // A test that brought the window back from the bubble (on a mocked clock) must not leave the
  // next test's Close inside the settling time.
  restored.at = Number.NEGATIVE_INFINITY;
  // Pages live in the URL hash; each test starts on Chat.
  window.location.hash = "";
});
