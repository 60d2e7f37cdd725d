// The one door to the Rust side: generated bindings plus a helper that turns their
// `{ status, data | error }` results into values or thrown CommandErrors.
import { t } from "@lingui/core/macro";
import { commands, events, type CommandError } from "./bindings";

export { commands, events };
export type { CommandError };

export type CommandResult<T> = { status: "ok"; data: T } | { status: "error"; error: CommandError };

export async function call<T>(pending: Promise<CommandResult<T>>): Promise<T> {
  const result = await pending;
  if (result.status === "error") throw result.error;
  return result.data;
}

/** A readable message for anything a command or the IPC layer threw: the engine's own text,
 * or a general one (in the UI's language) when it gave none. */
export function errorMessage(error: unknown): string {
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && "message" in error) return String(error.message);
  return t`Something went wrong.`;
}
