// Numbers for people, in the UI's language (`Intl`, with the locale the catalogue is in): sizes,
// counts, durations, costs and token counts. Every number the UI shows goes through here.
import { formatLocale } from "../i18n";

const cache = new Map<string, Intl.NumberFormat>();

/** One `Intl.NumberFormat` per locale and options, made once (they are slow to build). */
function numbers(options: Intl.NumberFormatOptions = {}): Intl.NumberFormat {
  const locale = formatLocale();
  const key = `${locale}|${JSON.stringify(options)}`;
  let format = cache.get(key);
  if (!format) {
    format = new Intl.NumberFormat(locale, options);
    cache.set(key, format);
  }
  return format;
}

/** A count with the locale's grouping: 12,345 / 12.345 / 12 345. */
export function formatNumber(n: number, options?: Intl.NumberFormatOptions): string {
  return numbers(options).format(n);
}

function unit(value: number, name: string, fractionDigits: number, display: "short" | "long" = "short"): string {
  return numbers({
    style: "unit",
    unit: name,
    unitDisplay: display,
    minimumFractionDigits: fractionDigits,
    maximumFractionDigits: fractionDigits,
  }).format(value);
}

/** A size: "512 bytes", "48.3 kB", "5.0 MB", "1.2 GB" (decimal units, as file managers show
 * them). `wholeMegabytes` rounds below a gigabyte to whole MB (model downloads). */
export function formatBytes(bytes: number, { wholeMegabytes = false } = {}): string {
  if (wholeMegabytes && bytes < 1e9) return unit(Math.round(bytes / 1e6), "megabyte", 0);
  if (bytes < 1e3) return unit(bytes, "byte", 0, "long");
  if (bytes < 1e6) return unit(bytes / 1e3, "kilobyte", 1);
  if (bytes < 1e9) return unit(bytes / 1e6, "megabyte", 1);
  return unit(bytes / 1e9, "gigabyte", 1);
}

/** How long something took: "120 ms", "1.5 sec", "42 sec" (one decimal under ten seconds). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return unit(Math.round(ms), "millisecond", 0);
  return unit(ms / 1000, "second", ms < 10_000 ? 1 : 0);
}

/** A cost in US dollars as providers bill it: four decimals under a cent. */
export function formatCost(usd: number): string {
  const digits = usd === 0 ? 0 : usd < 0.01 ? 4 : 2;
  return numbers({ style: "currency", currency: "USD", minimumFractionDigits: digits, maximumFractionDigits: digits }).format(usd);
}

/** A token count, short: 1234 -> "1.2K". Context sizes that are powers of two read as models
 * describe them (32768 -> "32K"). */
export function formatTokens(n: number): string {
  if (n < 1000) return formatNumber(n);
  const value = n % 1024 === 0 ? (n / 1024) * 1000 : n;
  // Three digits, not a fixed number of decimals: a language whose compact unit is 10,000 (万)
  // showed 16K as "2万"; now "1.6万", "16K", "128K" (and "1M" for 1,048,576).
  const digits = value >= 1_000_000 ? { maximumFractionDigits: 1 } : { maximumSignificantDigits: 3 };
  return formatNumber(value, { notation: "compact", ...digits });
}

/** Items joined as the language lists them: "mail, calendar and contacts" / "mail, calendar et contacts". */
export function formatList(items: readonly string[], type: "conjunction" | "disjunction" = "conjunction"): string {
  return new Intl.ListFormat(formatLocale(), { style: "long", type }).format(items);
}
