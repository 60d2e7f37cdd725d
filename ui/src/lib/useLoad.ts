// The one way the UI loads data for a view: start a request when its key changes (or on
// `reload`), and keep only the newest request's answer. An older answer that arrives late,
// or one for a view that has gone, is dropped, so responses can never apply out of order.
import { useCallback, useEffect, useRef, useState } from "react";

export interface Load<T> {
  /** The newest answer; kept while a reload runs, so the view does not flicker. */
  value: T | undefined;
  /** Why the newest request failed; cleared by the next success. */
  error: unknown;
  /** No answer yet for the current key. */
  loading: boolean;
  /** Asks again (after an event said the data changed); the newest request wins. */
  reload: () => void;
}

/**
 * Runs `load` now and whenever `key` changes (`null` skips loading; keys compare with
 * `Object.is`, so pass a string or a number). `load` may change on every render; the newest
 * one is used.
 */
export function useLoad<T>(load: () => Promise<T>, key: unknown): Load<T> {
  const [state, setState] = useState<{ key: unknown; value: T | undefined; error: unknown }>({
    key: undefined,
    value: undefined,
    error: null,
  });
  const latest = useRef(0);
  const loader = useRef(load);
  useEffect(() => {
    loader.current = load;
  });

  const start = useCallback((forKey: unknown) => {
    const request = ++latest.current;
    loader.current().then(
      (value) => request === latest.current && setState({ key: forKey, value, error: null }),
      (error: unknown) => request === latest.current && setState((s) => ({ key: forKey, value: s.value, error })),
    );
  }, []);

  useEffect(() => {
    if (key === null) return;
    start(key);
    // A view that goes (or moves to another key) takes no answer meant for it.
    const requests = latest;
    return () => {
      requests.current++;
    };
  }, [key, start]);

  const reload = useCallback(() => {
    if (key !== null) start(key);
  }, [key, start]);

  return { value: state.value, error: state.error, loading: key !== null && !Object.is(state.key, key), reload };
}
