// A real GTK text field in another process (tests/support/text_field.py): the application the
// dictate-anywhere tests type into. Its text and clipboard are read from what it prints.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { waitFor, xdotool } from "./harness.js";

const SCRIPT = fileURLToPath(new URL("../../support/text_field.py", import.meta.url));

/** A field titled `title`; `program` is its program name (its WM_CLASS: "xterm" makes it a
 * window Perch takes for a terminal). An X11 window unless `backend` says "wayland". */
export async function textField(title, program = "perch-test-field", { backend = "x11" } = {}) {
  const child = spawn("/usr/bin/python3", [SCRIPT, title, program], { env: { ...process.env, GDK_BACKEND: backend }, stdio: ["pipe", "pipe", "inherit"] });
  const field = { text: "", ready: false, clipboards: [] };
  createInterface({ input: child.stdout }).on("line", (line) => {
    const [kind, ...rest] = line.split(" ");
    const value = rest.join(" ");
    if (kind === "ready") field.ready = true;
    else if (kind === "text") field.text = JSON.parse(value);
    else if (kind === "clipboard") field.clipboards.push(JSON.parse(value));
  });
  await waitFor(() => field.ready, `the text field "${title}" to show`);
  const send = (line) => child.stdin.write(`${line}\n`);
  return {
    get text() {
      return field.text;
    },
    async focus() {
      const ids = await xdotool("search", "--sync", "--name", `^${title}$`);
      await xdotool("windowactivate", "--sync", ids.split("\n")[0]);
    },
    async setClipboard(text) {
      send(`clipboard ${JSON.stringify(text)}`);
      // Read back, so the clipboard is set before anything else happens.
      await waitFor(async () => (await this.clipboard()) === text, "the clipboard to be set");
    },
    async clipboard() {
      const before = field.clipboards.length;
      send("get-clipboard");
      await waitFor(() => field.clipboards.length > before, "the clipboard's text");
      return field.clipboards.at(-1);
    },
    setText(text) {
      send(`set ${JSON.stringify(text)}`);
      return waitFor(() => field.text === text, "the field's text to be set");
    },
    selectAll() {
      send("select-all");
    },
    deselect() {
      send("deselect");
    },
    close() {
      send("quit");
      child.kill();
    },
  };
}
