import "@testing-library/jest-dom/vitest";
import { afterEach } from "vitest";
import { cleanup } from "@testing-library/react";
import { clearMocks } from "./tauri";
import { resetDictation } from "../lib/dictation";

afterEach(() => {
  cleanup();
  clearMocks();
  resetDictation();
  // Pages live in the URL hash; each test starts on Chat.
  window.location.hash = "";
});
