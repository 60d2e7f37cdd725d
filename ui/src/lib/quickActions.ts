// The user's own quick actions on a selection (Settings -> General -> Screenshots).
import type { QuickAction } from "../bindings";

export type Action = Required<QuickAction>;

/** The action with every field (a stored one may lack some). */
export const complete = (a: QuickAction): Action => ({ name: a.name ?? "", prompt: a.prompt ?? "", model: a.model ?? "" });
