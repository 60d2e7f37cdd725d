// Writes latest.json, the manifest Tauri's updater reads, beside the first package:
// node update-manifest.mjs VERSION BASE_URL NOTES_FILE|"" PACKAGE.deb|PACKAGE.rpm...
// Each package is listed as `linux-<arch>-deb` or `linux-<arch>-rpm` (what a copy installed from
// that kind of package looks for first), and the first one also as `linux-<arch>` (what a copy
// not installed from a package looks for: it is offered that package to install by hand).
import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

const [version, base, notesFile, ...packages] = process.argv.slice(2);
// The updater's names for the architectures, from Debian's (PACKAGE_VERSION_ARCH.deb) and
// RPM's (PACKAGE-VERSION-RELEASE.ARCH.rpm).
const ARCH = { amd64: "x86_64", arm64: "aarch64", armhf: "armv7", i386: "i686", x86_64: "x86_64", aarch64: "aarch64", armv7hl: "armv7", i686: "i686" };
const platforms = {};
for (const pkg of packages) {
  const name = basename(pkg);
  const [, debArch, rpmArch] = /_([a-z0-9]+)\.deb$|\.([a-z0-9_]+)\.rpm$/.exec(name) ?? [];
  const arch = ARCH[debArch ?? rpmArch];
  if (!arch) throw new Error(`${name}: no architecture in the name (PACKAGE_VERSION_ARCH.deb or PACKAGE-VERSION-RELEASE.ARCH.rpm)`);
  const entry = { signature: readFileSync(`${pkg}.sig`, "utf8").trim(), url: `${base.replace(/\/$/, "")}/${name}` };
  platforms[`linux-${arch}-${debArch ? "deb" : "rpm"}`] = entry;
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
