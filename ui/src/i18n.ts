// The UI's language: which catalogue is loaded, and what `Intl` formats dates and numbers with.
import { i18n, type Messages } from "@lingui/core";
import { LANGUAGES, SOURCE_LOCALE, type Language } from "./locales/list";

export { i18n };

// One chunk per language: only the chosen one is ever loaded.
const catalogues: Record<string, () => Promise<{ messages: Messages }>> = {
  en: () => import("./locales/en.po"),
  "zh-CN": () => import("./locales/zh-CN.po"),
  ja: () => import("./locales/ja.po"),
  ko: () => import("./locales/ko.po"),
  de: () => import("./locales/de.po"),
  fr: () => import("./locales/fr.po"),
  es: () => import("./locales/es.po"),
  "pt-BR": () => import("./locales/pt-BR.po"),
  ru: () => import("./locales/ru.po"),
  ar: () => import("./locales/ar.po"),
};

/**
 * The supported language for the first of `candidates` (BCP 47 tags or POSIX locales such as
 * `pt_PT.UTF-8`) that names one: the exact tag, else the same language in another region
 * (`zh-Hans-SG` -> `zh-CN`, `pt-PT` -> `pt-BR`, `en-GB` -> `en`). English when none does.
 */
export function matchLanguage(candidates: readonly (string | null | undefined)[]): Language {
  for (const candidate of candidates) {
    if (!candidate) continue;
    const tag = candidate.split(/[.@]/)[0].replace(/_/g, "-").toLowerCase();
    if (!tag || tag === "c" || tag === "posix") continue;
    const exact = LANGUAGES.find((l) => l.tag.toLowerCase() === tag);
    if (exact) return exact;
    const base = tag.split("-")[0];
    const sameLanguage = LANGUAGES.find((l) => l.tag.split("-")[0].toLowerCase() === base);
    if (sameLanguage) return sameLanguage;
  }
  return LANGUAGES.find((l) => l.tag === SOURCE_LOCALE)!;
}

/** Loads `language`'s catalogue and switches the UI to it; the page's `lang` and `dir` follow. */
export async function activateLanguage(language: Language): Promise<void> {
  const { messages } = await catalogues[language.tag]();
  i18n.loadAndActivate({ locale: language.tag, messages });
  document.documentElement.lang = language.tag;
  document.documentElement.dir = language.rtl ? "rtl" : "ltr";
}

/** The tag `Intl` formats with: the UI's language, so dates and numbers read like its words. */
export function formatLocale(): string {
  return i18n.locale || SOURCE_LOCALE;
}
