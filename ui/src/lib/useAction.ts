// A view's buttons that call the engine: the failure of the last one (with the next step,
// where there is one) to show, and the view's data loaded again after each.
import { useState } from "react";
import { errorMessage } from "../ipc";
import { nextStep } from "./errors";

export function useAction(reload: () => void) {
  const [error, setError] = useState<string | null>(null);
  const act = async (pending: Promise<unknown>) => {
    try {
      await pending;
      setError(null);
    } catch (e) {
      const next = nextStep(e);
      setError(next ? `${errorMessage(e)} ${next}` : errorMessage(e));
    }
    reload();
  };
  return { error, act };
}
