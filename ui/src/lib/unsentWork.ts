// While the window is hidden, the shell may end this page's web process to free its memory and
// load the page again on show (Settings -> General). The route and the draft survive that; other
// work does not, so whatever holds it says so here, and the page is kept while any does.
import { useEffect } from "react";
import { commands } from "../ipc";

const holders = new Set<symbol>();
let reported = false;

function report() {
  const holds = holders.size > 0;
  if (holds === reported) return;
  reported = holds;
  // Best effort: if the shell does not hear it, the page may be reloaded after a long hide,
  // which is what happens without this hook.
  commands.pageHoldsUnsent(holds).catch((e: unknown) => console.warn("could not report unsent work", e));
}

/** Keeps the page while `holds` is true (file chips, pictures, an edit in progress, a form). */
export function useHoldsUnsentWork(holds: boolean) {
  useEffect(() => {
    if (!holds) return;
    // eslint-disable-next-line lingui/no-unlocalized-strings -- a symbol's description, for debugging
    const key = Symbol("unsent work");
    holders.add(key);
    report();
    return () => {
      holders.delete(key);
      report();
    };
  }, [holds]);
}
