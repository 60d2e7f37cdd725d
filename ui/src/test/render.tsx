// Testing Library with the UI's I18nProvider around every render, as in the app (`<Trans>`
// refuses to render without one). Tests import `render` from here instead.
import type { ReactNode } from "react";
import { render as baseRender, renderHook as baseRenderHook, type RenderOptions } from "@testing-library/react";
import { I18nProvider } from "@lingui/react";
import { i18n } from "../i18n";

export * from "@testing-library/react";

function Wrapper({ children }: { children: ReactNode }) {
  return <I18nProvider i18n={i18n}>{children}</I18nProvider>;
}

export function render(ui: Parameters<typeof baseRender>[0], options?: Omit<RenderOptions, "wrapper">) {
  return baseRender(ui, { wrapper: Wrapper, ...options });
}

export function renderHook<Result, Props>(hook: (props: Props) => Result, options?: { initialProps?: Props }) {
  return baseRenderHook(hook, { wrapper: Wrapper, ...options });
}
