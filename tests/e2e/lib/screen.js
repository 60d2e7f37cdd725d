// The screen as the capture tests paint and read it: a known picture on the root window,
// pixels of PNG files, monitors split with xrandr. ImageMagick and xrandr do the work.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The colour of each quarter of the 1280x800 test picture, as ImageMagick writes them. */
export const QUARTERS = { topLeft: "#DC1E1E", topRight: "#1E1EDC", bottomLeft: "#1EC81E", bottomRight: "#E6C814" };

/** The colour the test picture has at (x, y). */
export function patternAt(x, y) {
  if (y < 400) return x < 640 ? QUARTERS.topLeft : QUARTERS.topRight;
  return x < 640 ? QUARTERS.bottomLeft : QUARTERS.bottomRight;
}

/** Paints the root window with the four-colour test picture (what every capture sees behind windows). */
export async function paintRoot(dir) {
  const file = join(dir, "pattern.png");
  await run("convert", [
    "-size", "1280x800", `xc:${QUARTERS.topLeft}`,
    "-fill", QUARTERS.topRight, "-draw", "rectangle 640,0 1279,399",
    "-fill", QUARTERS.bottomLeft, "-draw", "rectangle 0,400 639,799",
    "-fill", QUARTERS.bottomRight, "-draw", "rectangle 640,400 1279,799",
    file,
  ]);
  // `display` sets the background and exits; its status varies, so the pixels are checked instead.
  await run("display", ["-window", "root", file]).catch(() => {});
  return file;
}

/** Opens an X window filled with a solid colour, titled `title`, at (x, y); returns the child. */
export async function colourWindow(dir, { title, x, y, width, height, colour }) {
  const file = join(dir, `${title}.png`);
  await run("convert", ["-size", `${width}x${height}`, `xc:${colour}`, file]);
  const { spawn } = await import("node:child_process");
  return spawn("display", ["-title", title, "-geometry", `+${x}+${y}`, file], { stdio: "ignore" });
}

/** Writes a base64 image to a file and returns its size and a pixel reader. */
export async function decoded(dir, name, base64) {
  const file = join(dir, name);
  writeFileSync(file, Buffer.from(base64, "base64"));
  const { stdout } = await run("identify", ["-format", "%w %h", file]);
  const [width, height] = stdout.trim().split(" ").map(Number);
  return { file, width, height, pixel: (x, y) => pixel(file, x, y) };
}

/** "#RRGGBB" of one pixel of an image file. */
export async function pixel(file, x, y) {
  const { stdout } = await run("convert", [file, "-crop", `1x1+${x}+${y}`, "-depth", "8", "txt:-"]);
  return stdout.match(/#[0-9A-F]{6}/i)[0].toUpperCase();
}

/** "#RRGGBB" of one pixel on the screen, as shown now. */
export async function screenPixel(x, y) {
  const { stdout } = await run("import", ["-window", "root", "-crop", `1x1+${x}+${y}`, "-depth", "8", "txt:-"]);
  return stdout.match(/#[0-9A-F]{6}/i)[0].toUpperCase();
}

export async function xrandr(...args) {
  return run("xrandr", args);
}
