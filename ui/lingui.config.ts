import { defineConfig } from "@lingui/conf";
import { formatter } from "@lingui/format-po";
import { LOCALE_TAGS, SOURCE_LOCALE } from "./src/locales/list";

// Messages are the English text itself (ids are hashes of it), so a component reads as what the
// user sees. `lingui extract` writes every locale's catalogue; ui/src/locales/catalogues.test.ts
// fails when one misses a message or keeps one the source no longer has.
export default defineConfig({
  sourceLocale: SOURCE_LOCALE,
  locales: [...LOCALE_TAGS],
  fallbackLocales: { default: SOURCE_LOCALE },
  catalogs: [{ path: "<rootDir>/src/locales/{locale}", include: ["<rootDir>/src"], exclude: ["**/*.test.*", "**/test/**", "**/bindings.ts"] }],
  format: formatter({ lineNumbers: false }),
  orderBy: "messageId",
});
