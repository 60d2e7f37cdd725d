import { describe, expect, it } from "vitest";
import { act, renderHook, waitFor } from "../test/render";
import { useLoad } from "./useLoad";

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("useLoad", () => {
  it("keeps the answer for the newest key when an older one arrives later", async () => {
    const pending = new Map<string, ReturnType<typeof deferred<string>>>();
    const { result, rerender } = renderHook(({ id }) => useLoad(() => {
      const d = deferred<string>();
      pending.set(id, d);
      return d.promise;
    }, id), { initialProps: { id: "a" } });
    expect(result.current.loading).toBe(true);
    rerender({ id: "b" });
    await act(async () => pending.get("b")!.resolve("B"));
    expect(result.current.value).toBe("B");
    await act(async () => pending.get("a")!.resolve("A"));
    expect(result.current.value).toBe("B");
    expect(result.current.loading).toBe(false);
  });

  it("reports a failure, keeps the last value, and a reload clears the error", async () => {
    let answer: Promise<number> = Promise.resolve(1);
    const { result } = renderHook(() => useLoad(() => answer, "k"));
    await waitFor(() => expect(result.current.value).toBe(1));
    answer = Promise.reject({ kind: "storage", message: "disk full" });
    act(() => result.current.reload());
    await waitFor(() => expect(result.current.error).toEqual({ kind: "storage", message: "disk full" }));
    expect(result.current.value).toBe(1);
    answer = Promise.resolve(2);
    act(() => result.current.reload());
    await waitFor(() => expect(result.current.value).toBe(2));
    expect(result.current.error).toBeNull();
  });

  it("loads nothing for a null key", () => {
    let called = false;
    const { result } = renderHook(() => useLoad(async () => (called = true), null));
    expect(called).toBe(false);
    expect(result.current.loading).toBe(false);
  });
});
