import "@testing-library/jest-dom/vitest";
import { afterEach } from "vitest";
import { cleanup } from "@testing-library/react";
import { clearMocks } from "./tauri";

afterEach(() => {
  cleanup();
  clearMocks();
  // Pages live in the URL hash; each test starts on Chat.
  window.location.hash = "";
});
