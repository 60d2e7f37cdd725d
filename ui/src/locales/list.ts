// The languages Perch's UI speaks. Kept apart from the catalogues so the Lingui config, the
// language setting and the tests read one list.

export const SOURCE_LOCALE = "en";

export interface Language {
  /** BCP 47 tag: the catalogue's file name and what `Intl` formats with. */
  tag: string;
  /** The language's own name for itself, shown in the picker whatever the UI's language. */
  name: string;
  rtl?: boolean;
}

export const LANGUAGES: readonly Language[] = [
  { tag: "en", name: "English" },
  { tag: "zh-CN", name: "简体中文" },
  { tag: "ja", name: "日本語" },
  { tag: "ko", name: "한국어" },
  { tag: "de", name: "Deutsch" },
  { tag: "fr", name: "Français" },
  { tag: "es", name: "Español" },
  { tag: "pt-BR", name: "Português (Brasil)" },
  { tag: "ru", name: "Русский" },
  { tag: "ar", name: "العربية", rtl: true },
];

export const LOCALE_TAGS = LANGUAGES.map((l) => l.tag);
