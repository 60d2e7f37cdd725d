// Writes latest.json, the manifest Tauri's updater reads, beside the first package:
// node update-manifest.mjs VERSION BASE_URL NOTES_FILE|"" PACKAGE.deb...
// Each package is listed as `linux-<arch>-deb` (what a .deb install looks for first) and as
// `linux-<arch>` (what a copy not installed from a package looks for: it is offered the .deb to
// install by hand).
import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

const [version, base, notesFile, ...packages] = process.argv.slice(2);
const ARCH = { amd64: "x86_64", arm64: "aarch64", armhf: "armv7", i386: "i686" };
const platforms = {};
for (const pkg of packages) {
  const name = basename(pkg);
  const arch = ARCH[/_([a-z0-9]+)\.deb$/.exec(name)?.[1]];
  if (!arch) throw new Error(`${name}: no Debian architecture in the name (PACKAGE_VERSION_ARCH.deb)`);
  const entry = { signature: readFileSync(`${pkg}.sig`, "utf8").trim(), url: `${base.replace(/\/$/, "")}/${name}` };
  platforms[`linux-${arch}-deb`] = entry;
  platforms[`linux-${arch}`] ??= entry;
}
const manifest = {
  version,
  notes: notesFile ? readFileSync(notesFile, "utf8").trim() : undefined,
  pub_date: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
  platforms,
};
const out = join(dirname(packages[0]), "latest.json");
writeFileSync(out, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`${out}: version ${version}, ${Object.keys(platforms).join(", ")}`);
