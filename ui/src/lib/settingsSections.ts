// The Settings page's sections: ids for the URL and the tabs, and the words each tab shows.
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";

/** The sections' ids: in the URL (`#/settings?section=Logs`) and the tabs' ids, never translated. */
// eslint-disable-next-line lingui/no-unlocalized-strings -- ids; SECTION_LABELS holds what the tabs show
export const SECTIONS = ["General", "Models", "Voice", "Tools", "Memories", "Terminal", "Permissions", "MCP", "Connections", "Reviews", "Logs"] as const;
export type Section = (typeof SECTIONS)[number];

/** What each section's tab shows. MCP, the protocol's name, reads the same in every language. */
const SECTION_LABELS: Record<Exclude<Section, "MCP">, MessageDescriptor> = {
  General: msg({ message: "General", comment: "settings section" }),
  Models: msg({ message: "Models", comment: "settings section" }),
  Voice: msg({ message: "Voice", comment: "settings section" }),
  Tools: msg({ message: "Tools", comment: "settings section" }),
  Memories: msg({ message: "Memories", comment: "settings section: notes about the user that Perch keeps for later answers" }),
  Terminal: msg({ message: "Terminal", comment: "settings section" }),
  Permissions: msg({ message: "Permissions", comment: "settings section" }),
  Connections: msg({ message: "Connections", comment: "settings section: accounts such as Google" }),
  Reviews: msg({ message: "Reviews", comment: "settings section: code reviews sent from an editor" }),
  Logs: msg({ message: "Logs", comment: "settings section" }),
};

/** The tab's words for a section id (an unknown id, from an older engine, is shown as it is). */
export function sectionLabel(section: string, t: (d: MessageDescriptor) => string): string {
  const label = SECTION_LABELS[section as Exclude<Section, "MCP">];
  return label ? t(label) : section;
}
