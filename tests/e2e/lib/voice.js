// Dictation set-up shared by the specs: a virtual microphone that plays a spoken sentence, and
// Settings -> Voice pointed at it and at the whisper test model.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, waitFor } from "./harness.js";

export const MODEL = process.env.PERCH_WHISPER_TEST_MODEL ?? join(homedir(), ".cache/perch/models/ggml-tiny.en.bin");
const MICROPHONE = fileURLToPath(new URL("../../voice/virtual-microphone.sh", import.meta.url));

/** An ALSA configuration whose microphone says `sentence` (espeak-ng), for ALSA_CONFIG_PATH. */
export function virtualMicrophone(sentence) {
  const dir = mkdtempSync(join(tmpdir(), "perch-mic-"));
  const speech = join(dir, "speech.wav");
  execFileSync("espeak-ng", ["-s", "150", "-w", speech, sentence]);
  return execFileSync(MICROPHONE, [speech, join(dir, "alsa")]).toString().trim();
}

/** Settings -> Voice: the virtual microphone and the model file chosen, as a user does. */
export async function chooseMicrophoneAndModel(browser) {
  const $ = (s) => browser.$(s);
  await (await $('a[aria-label="Settings"]')).click();
  await (await $("button=Voice")).click();
  const mic = await $('select[aria-label="Microphone"]');
  await waitFor(async () => (await mic.getText()).includes("Perch test microphone"), "the virtual microphone in the list");
  await mic.selectByVisibleText("Perch test microphone · 48 kHz, 2 ch");
  const file = await $('input[aria-label="Model file"]');
  await file.setValue(MODEL);
  await browser.keys("Enter");
  await waitFor(async () => (await (await $(".card")).getText()).includes("Dictation uses this file"), "the model file to be saved");
}

/** Perch started on a fresh data folder with a virtual microphone that says `sentence`. */
export function launchWithMicrophone(sentence) {
  if (!existsSync(MODEL)) throw new Error(`${MODEL} is missing: run make deps`);
  return launch(freshDataDir(), { ALSA_CONFIG_PATH: virtualMicrophone(sentence), PERCH_KEY_STORE: "file" });
}
