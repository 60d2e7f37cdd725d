import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import App from "./App";
import { commands } from "./ipc";
import "./styles.css";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

// Two frames later the first paint is on screen; the shell logs it for the start-up benchmark.
requestAnimationFrame(() => requestAnimationFrame(() => void commands.uiReady(performance.now()).catch(() => {})));
