// A virtual microphone that speaks in real time. The voice specs' microphone
// (tests/voice/virtual-microphone.sh) reads its samples from a file through ALSA's `file`
// plugin, whose null slave has no clock: the app reads it as fast as it can, hundreds of times
// real time, and a dictation's buffers fill in milliseconds. Here the plugin's infile is a FIFO
// that this process feeds at the device's own rate (48 kHz, stereo, 32-bit float), so a
// recording takes as long as the speech does, as with a real microphone. Every open of the
// device (each dictation, each listing of devices) hears the sentence from its start, then
// silence until it closes.
import { execFileSync } from "node:child_process";
import { constants } from "node:fs";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sleep } from "./harness.js";

const MICROPHONE = fileURLToPath(new URL("../../voice/virtual-microphone.sh", import.meta.url));
// 48 000 frames a second of 2 channels of 4 bytes: the raw format virtual-microphone.sh writes.
const FRAME = 8;
const BYTES_PER_MS = (48_000 * FRAME) / 1000;
// Fed a little ahead of the clock, as a sound card's buffer holds a period or two.
const AHEAD_MS = 40;
const TICK_MS = 10;

/**
 * A microphone saying `sentence`, after `quietMs` of silence from each open (0 by default).
 * Returns `alsaConfig` (for ALSA_CONFIG_PATH), `seconds` (the speech's length), `opens` (how
 * many times the device was opened so far) and `stop()`.
 */
export function pacedMicrophone(sentence, { quietMs = 0 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "perch-paced-mic-"));
  const speechWav = join(dir, "speech.wav");
  execFileSync("espeak-ng", ["-s", "150", "-w", speechWav, sentence]);
  // The script's conversion and configuration, with the sample file swapped for the FIFO.
  const fileConfig = execFileSync(MICROPHONE, [speechWav, join(dir, "file")]).toString().trim();
  const raw = join(dir, "file", "mic.raw");
  const quiet = Buffer.alloc(Math.floor((quietMs * BYTES_PER_MS) / FRAME) * FRAME);
  const speech = Buffer.concat([quiet, readFileSync(raw)]);
  const fifo = join(dir, "mic.fifo");
  execFileSync("mkfifo", [fifo]);
  const alsaConfig = join(dir, "asound.conf");
  writeFileSync(alsaConfig, readFileSync(fileConfig, "utf8").replace(`infile "${raw}"`, `infile "${fifo}"`));

  const state = { stopped: false, opens: 0 };
  const fed = feed(fifo, speech, state);
  return {
    alsaConfig,
    seconds: speech.length / BYTES_PER_MS / 1000,
    get opens() {
      return state.opens;
    },
    async stop() {
      state.stopped = true;
      // The feeder may be waiting for a reader to open the FIFO: be that reader, once.
      const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => null);
      await fed;
      await reader?.close();
    },
  };
}

/** Waits for each reader of `fifo` and plays it `speech`, then silence, at the device's rate. */
async function feed(fifo, speech, state) {
  const silence = Buffer.alloc(Math.ceil((BYTES_PER_MS * (AHEAD_MS + 4 * TICK_MS)) / FRAME) * FRAME);
  while (!state.stopped) {
    // Opening for writing waits until the device opens the FIFO for reading.
    const out = await open(fifo, "w");
    if (state.stopped) {
      await out.close();
      return;
    }
    state.opens += 1;
    const started = Date.now();
    let sent = 0;
    try {
      while (!state.stopped) {
        const due = Math.floor(((Date.now() - started + AHEAD_MS) * BYTES_PER_MS) / FRAME) * FRAME;
        if (due > sent) {
          const from = sent < speech.length ? speech : silence;
          const at = sent < speech.length ? sent : 0;
          const length = Math.min(due - sent, from.length - at);
          // A write to a FIFO whose reader has gone fails with EPIPE: the device was closed.
          await out.write(from, at, length);
          sent += length;
        }
        await sleep(TICK_MS);
      }
    } catch (e) {
      if (e.code !== "EPIPE") throw e;
    } finally {
      await out.close().catch(() => {});
    }
  }
}
