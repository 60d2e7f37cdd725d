import { afterEach, describe, expect, it } from "vitest";
import { i18n } from "@lingui/core";
import { formatTokens } from "./format";

describe("formatTokens", () => {
  const before = i18n.locale;
  afterEach(() => i18n.activate(before));

  it("keeps a context window's size readable in every language's compact units", () => {
    i18n.loadAndActivate({ locale: "en", messages: {} });
    expect([4096, 16384, 131072, 1048576, 12345, 999].map(formatTokens)).toEqual(["4K", "16K", "128K", "1M", "12.3K", "999"]);
    // Japanese groups by 10,000: 16K once read "2万".
    i18n.loadAndActivate({ locale: "ja", messages: {} });
    expect([16384, 131072].map(formatTokens)).toEqual(["1.6万", "12.8万"]);
  });
});
