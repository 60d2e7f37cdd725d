// A virtual loudspeaker that plays in real time. ALSA's `file` plugin writes what the app plays
// to its outfile; here that is a FIFO this process drains at the device's own rate (48 kHz,
// stereo, 32-bit float, the format cpal opens it with), so the app's speech takes as long to
// play as it would on a sound card and a voice can be interrupted halfway. What was played is
// kept, and `recording()` writes its speech to a WAV file (runs of digital silence, which the
// paused stream's gaps are, shortened) for `perch transcribe` to hear.
import { execFileSync } from "node:child_process";
import { constants, mkdtempSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sleep } from "./harness.js";

const FRAME = 8;
const BYTES_PER_MS = (48_000 * FRAME) / 1000;
const TICK_MS = 10;

/** The ALSA lines of a loudspeaker named "Perch test speaker" that plays into `fifo`. */
export function speakerConfig(fifo) {
  return `pcm.perch_test_speaker {
    type file
    slave.pcm "null"
    file "${fifo}"
    format "raw"
    hint { show on description "Perch test speaker" }
}
`;
}

/** A loudspeaker drained in real time. Returns `fifo`, `played()` (seconds of sound so far),
 * `recording(path)` and `stop()`. */
export async function pacedSpeaker() {
  const dir = mkdtempSync(join(tmpdir(), "perch-paced-speaker-"));
  const fifo = join(dir, "speaker.fifo");
  execFileSync("mkfifo", [fifo]);
  // Open for reading first, without waiting for a writer: the app opens the device later.
  const input = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const chunks = [];
  const state = { stopped: false, bytes: 0 };
  const drained = (async () => {
    const started = Date.now();
    let allowed = 0;
    const buffer = Buffer.alloc(BYTES_PER_MS * 50);
    while (!state.stopped) {
      allowed = (Date.now() - started) * BYTES_PER_MS;
      // Never ahead of the clock: the writer blocks on a full pipe meanwhile, as on a card.
      const room = Math.min(buffer.length, Math.floor((allowed - state.bytes) / FRAME) * FRAME);
      if (room > 0) {
        try {
          const { bytesRead } = await input.read(buffer, 0, room, null);
          if (bytesRead > 0) {
            chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
            state.bytes += bytesRead;
          } else {
            // Nothing written: the stream is paused; the clock goes on without it.
            state.bytes = Math.max(state.bytes, allowed - BYTES_PER_MS * 100);
          }
        } catch (e) {
          if (e.code !== "EAGAIN") throw e;
          state.bytes = Math.max(state.bytes, allowed - BYTES_PER_MS * 100);
        }
      }
      await sleep(TICK_MS);
    }
  })();
  return {
    fifo,
    /** Seconds of sound (not silence) played so far. */
    played() {
      let loud = 0;
      for (const chunk of chunks) {
        for (let i = 0; i + FRAME <= chunk.length; i += FRAME) if (chunk.readFloatLE(i) !== 0) loud += 1;
      }
      return loud / 48_000;
    },
    /** The left channel's speech as a 16 kHz mono WAV file at `path`. */
    recording(path) {
      const all = Buffer.concat(chunks);
      const left = [];
      let zeros = 0;
      for (let i = 0; i + FRAME <= all.length; i += FRAME) {
        const sample = all.readFloatLE(i);
        zeros = sample === 0 ? zeros + 1 : 0;
        if (zeros < 12_000) left.push(sample);
      }
      const raw = Buffer.alloc(left.length * 4);
      left.forEach((s, i) => raw.writeFloatLE(s, i * 4));
      writeFileSync(`${path}.raw`, raw);
      execFileSync("sox", ["-t", "raw", "-r", "48000", "-e", "floating-point", "-b", "32", "-c", "1", `${path}.raw`, "-r", "16000", "-b", "16", path]);
      return path;
    },
    async stop() {
      state.stopped = true;
      await drained;
      await input.close();
    },
  };
}
