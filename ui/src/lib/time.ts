// Grouping and labels for lists of things with timestamps (History), in the UI's language.
import { formatLocale } from "../i18n";

export interface Group<T> {
  label: string;
  items: T[];
}

function startOfDay(ms: number): number {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

// History labels every conversation: one formatter per language, not one per row.
let relativeFormat: { locale: string; format: Intl.RelativeTimeFormat } | null = null;
function relative(locale: string): Intl.RelativeTimeFormat {
  if (relativeFormat?.locale !== locale) relativeFormat = { locale, format: new Intl.RelativeTimeFormat(locale, { numeric: "auto" }) };
  return relativeFormat.format;
}

/** "Today", "Yesterday", or the date, for the local day containing `ms`. */
export function dayLabel(ms: number, now: number = Date.now()): string {
  const day = startOfDay(ms);
  const today = startOfDay(now);
  const yesterday = new Date(today);
  yesterday.setDate(yesterday.getDate() - 1);
  if (day === today || day === yesterday.getTime()) {
    // The locale's own words ("today", "hier", "昨日"), as a heading.
    const words = relative(formatLocale()).format(day === today ? 0 : -1, "day");
    return words.charAt(0).toLocaleUpperCase(formatLocale()) + words.slice(1);
  }
  const sameYear = new Date(ms).getFullYear() === new Date(now).getFullYear();
  return new Date(ms).toLocaleDateString(formatLocale(), {
    weekday: sameYear ? "short" : undefined,
    day: "numeric",
    month: "short",
    year: sameYear ? undefined : "numeric",
  });
}

/** Groups items (already sorted newest first) by local day, keeping their order. */
export function groupByDay<T>(items: T[], time: (item: T) => number, now: number = Date.now()): Group<T>[] {
  const groups: Group<T>[] = [];
  for (const item of items) {
    const label = dayLabel(time(item), now);
    const last = groups[groups.length - 1];
    if (last && last.label === label) last.items.push(item);
    else groups.push({ label, items: [item] });
  }
  return groups;
}

export function clockTime(ms: number): string {
  return new Date(ms).toLocaleTimeString(formatLocale(), { hour: "2-digit", minute: "2-digit" });
}

/** A date and time, in full: "27 Nov 2026, 14:05" in the UI's language. */
export function dateTime(ms: number): string {
  return new Date(ms).toLocaleString(formatLocale(), { dateStyle: "medium", timeStyle: "short" });
}
