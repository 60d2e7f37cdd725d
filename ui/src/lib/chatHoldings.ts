// What the composer holds for the next question (screenshot chips, pasted pictures, attached
// files) belongs to the chat it was added in: Ctrl+N or another conversation from History must
// not carry it into an unrelated question, and going back finds it where it was left.
//
// Screenshot chips live on the engine's shelf (they survive a restart), so which chat each one
// belongs to is kept beside them, in localStorage; pictures and files live in the composer and
// are set aside here while their chat is not on screen.
import type { ImageInput } from "../bindings";
import type { FileChip } from "./attachedFiles";

/** The chat not saved yet (the one Ctrl+N opens). */
export const NEW_CHAT = "new";

const OWNERS_KEY = "perch.captureOwners";

/** The chat key of a route's conversation id. */
export function chatKey(conversationId: string | undefined): string {
  return conversationId ?? NEW_CHAT;
}

function readOwners(): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(OWNERS_KEY) ?? "{}");
    return parsed && typeof parsed === "object" ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function writeOwners(owners: Record<string, string>) {
  localStorage.setItem(OWNERS_KEY, JSON.stringify(owners));
}

/** The captures on the shelf split by chat: those of `chat` (a capture no chat has yet becomes
 * `chat`'s: it was taken while this chat was the one on screen, or the next one shown), and
 * those waiting in others. Owners of captures no longer on the shelf are forgotten. */
export function splitByChat<T extends { id: string }>(shelf: T[], chat: string): { here: T[]; elsewhere: T[] } {
  const before = readOwners();
  const owners: Record<string, string> = {};
  for (const capture of shelf) owners[capture.id] = before[capture.id] ?? chat;
  if (JSON.stringify(owners) !== JSON.stringify(before)) writeOwners(owners);
  return {
    here: shelf.filter((c) => owners[c.id] === chat),
    elsewhere: shelf.filter((c) => owners[c.id] !== chat),
  };
}

/** The user brought captures from other chats into `chat`. */
export function moveCaptures(ids: string[], chat: string) {
  const owners = readOwners();
  for (const id of ids) owners[id] = chat;
  writeOwners(owners);
}

interface Held {
  images: ImageInput[];
  files: FileChip[];
}

const held = new Map<string, Held>();
/** The new chat that was just saved under this id: its holdings stay in the composer. */
let savedAs: string | null = null;

/** The new chat was saved as `id` (its first answer started): what it holds is `id`'s now. */
export function newChatSaved(id: string) {
  savedAs = id;
  // What it held is in the composer (or was sent): nothing is set aside for "new" any more.
  held.delete(NEW_CHAT);
  const owners = readOwners();
  for (const [capture, chat] of Object.entries(owners)) if (chat === NEW_CHAT) owners[capture] = id;
  writeOwners(owners);
}

/** Whether the composer, going from chat `from` to `to`, keeps what it holds (the same chat,
 * saved) or sets it aside for `from` and takes `to`'s. */
export function keepsHoldings(from: string, to: string): boolean {
  return from === to || (from === NEW_CHAT && to === savedAs);
}

/** Sets `from`'s pictures and files aside and returns `to`'s (none when it had none). Called
 * while rendering, so calling it twice gives the same (`to`'s stay set aside until it is left
 * again, when what it holds then replaces them). */
export function swapHoldings(from: string, to: string, holding: Held): Held {
  if (holding.images.length > 0 || holding.files.length > 0) held.set(from, holding);
  else held.delete(from);
  // A chat saved earlier is an ordinary chat once a new one is opened.
  if (to === NEW_CHAT) savedAs = null;
  return held.get(to) ?? { images: [], files: [] };
}
