import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";
import { lingui } from "@lingui/vite-plugin";

/**
 * Perch runs with Object.prototype frozen (tauri's `freezePrototype`). xterm.js assigns
 * `toString` on a plain namespace object, which a frozen prototype forbids in strict code (the
 * "override mistake"), so the whole UI failed to load. The assignment becomes a property
 * definition; the build fails if xterm.js changes so that the rewrite no longer applies.
 */
function xtermUnderFrozenPrototype(): Plugin {
  return {
    name: "perch-xterm-frozen-prototype",
    transform(code, id) {
      // The dev server asks for `xterm.mjs?v=HASH`: the file is the part before the query.
      const file = id.split("?", 1)[0];
      if (!/[\\/]@xterm[\\/]xterm[\\/]lib[\\/]xterm\.m?js$/.test(file)) return null;
      let count = 0;
      const fixed = code.replace(/\b([A-Za-z_$][\w$]*)\.toString=([A-Za-z_$][\w$]*)(?=[;,])/g, (_, target: string, value: string) => {
        count += 1;
        return `Object.defineProperty(${target},"toString",{value:${value},writable:!0,configurable:!0})`;
      });
      if (count === 0) this.error("xterm.js no longer assigns toString: check perch-xterm-frozen-prototype");
      return { code: fixed, map: null };
    },
  };
}

/**
 * KaTeX's stylesheet offers each font as woff2, woff and ttf, and the build would ship all three.
 * WebKitGTK reads woff2 (it links libwoff2), so the other two are only weight in the package: 0.8
 * MB of the 1.1 MB of fonts, most of it incompressible (issue 16). The build fails if the
 * stylesheet's form changes so that nothing is removed.
 */
function katexWoff2Only(): Plugin {
  return {
    name: "perch-katex-woff2-only",
    // Before Vite's CSS plugin turns the urls into assets.
    enforce: "pre",
    transform(code, id) {
      if (!/[\\/]katex[\\/]dist[\\/]katex(\.min)?\.css$/.test(id)) return null;
      let count = 0;
      const fixed = code.replace(/,url\([^)]*\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)/g, () => {
        count += 1;
        return "";
      });
      if (count === 0) this.error("KaTeX's fonts are no longer listed as woff2, woff, ttf: check perch-katex-woff2-only");
      return { code: fixed, map: null };
    },
  };
}

// Tauri serves the built files itself; the dev server is only for `tauri dev`.
export default defineConfig({
  plugins: [
    // Lingui's macros (`t`, `<Trans>`, `plural`) become catalogue lookups at build time, through
    // Babel: the plugin's native transform is an optional per-platform package npm may skip.
    react({ babel: { plugins: ["@lingui/babel-plugin-lingui-macro"] } }),
    // Compiles `.po` catalogues when they are imported: no separate compile step.
    lingui(),
    xtermUnderFrozenPrototype(),
    katexWoff2Only(),
  ],
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  // Pre-bundling would skip the plugin above in `tauri dev`.
  optimizeDeps: { exclude: ["@xterm/xterm"] },
  build: {
    target: "safari15",
    outDir: "dist",
    emptyOutDir: true,
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    css: false,
  },
});
