import js from "@eslint/js";
import globals from "globals";
import reactHooks from "eslint-plugin-react-hooks";
import lingui from "eslint-plugin-lingui";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist", "src/bindings.ts"] },
  {
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    files: ["**/*.{ts,tsx}"],
    languageOptions: { ecmaVersion: 2022, globals: globals.browser },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true, argsIgnorePattern: "^_" }],
    },
  },
  // Every word the user reads comes from the catalogue (ui/src/locales): a sentence-like literal
  // in the UI's code outside `t`, `msg`, `<Trans>` or `plural` is an error.
  {
    files: ["src/**/*.{ts,tsx}"],
    ignores: ["src/**/*.test.{ts,tsx}", "src/test/**", "src/locales/**"],
    plugins: { lingui },
    rules: {
      ...lingui.configs.recommended.rules,
      "lingui/no-unlocalized-strings": [
        "error",
        {
          ignore: [
            // Not words: identifiers, keys, paths, CSS, MIME types, one lower-case word.
            "^(?![A-Z][a-z]|\\S+\\s\\S+).+$",
            "^[A-Z0-9_.:+/-]+$",
            "^[A-Z][a-z]*[A-Z]\\w*$",
            // Key names and shortcuts ("Esc", "Shift+Enter", "Ctrl+= / Ctrl+-"): keyboards print them so.
            "^(Esc|Enter|Tab|Space|(Ctrl|Alt|Shift|Super)(\\+\\S+)+)( / (Ctrl|Alt|Shift|Super)(\\+\\S+)+)*$",
          ],
          ignoreNames: [
            { regex: { pattern: "className|style|class$|key$|Id$|^id$|href|src|type|role|kind|mode|status|name$|^on[A-Z]|Event$|testid", flags: "i" } },
            { regex: { pattern: "^[A-Z0-9_]+$" } },
            "labelledBy",
            "aria-labelledby",
            "aria-describedby",
            "aria-controls",
            "aria-live",
            "aria-haspopup",
            "aria-current",
            "aria-autocomplete",
            "autoComplete",
            "inputMode",
            "enterKeyHint",
            "accept",
            "target",
            "rel",
            "method",
            "d",
            "viewBox",
            "fill",
            "stroke",
            "preserveAspectRatio",
          ],
          ignoreFunctions: [
            "console.*",
            "Error",
            "*.addEventListener",
            "*.removeEventListener",
            "*.dispatchEvent",
            "*.querySelector",
            "*.querySelectorAll",
            "*.getAttribute",
            "*.setAttribute",
            "document.documentElement.style.setProperty",
            "*.includes",
            "*.startsWith",
            "*.endsWith",
            "*.split",
            "*.replace",
            "*.matchMedia",
            "*.toggle",
            "*.classList.*",
            "document.createElement",
            "new Event",
            "Event",
            "CustomEvent",
            "RegExp",
            "invoke",
            "listen",
          ],
        },
      ],
    },
  },
);
