import { useEffect, useRef, useState, type ClipboardEvent, type DragEvent, type KeyboardEvent } from "react";
import type { Capture, CaptureMode, ImageInput, ModelInfo } from "../../bindings";
import { useCaptures } from "../../lib/captures";
import { formatTokens } from "../../lib/models";
import { cancelDictation, dismissNotice, insertAt, takeFinals, useDictation } from "../../lib/dictation";
import { useSettings } from "../../lib/settings";
import { CaptureChips } from "../capture/CaptureChips";
import { CaptureIcon, SendIcon } from "../Icons";
import { MicButton } from "./MicButton";

/** The most a message may hold; a bigger paste is refused before it reaches the text box. */
export const MAX_MESSAGE_CHARS = 1_000_000;
const DRAFT_KEY = "perch.draft";

interface Props {
  streaming: boolean;
  models: ModelInfo[];
  model: string | null;
  onModel: (id: string) => void;
  /** Tokens the last exchange used, and how many the model reads. */
  usage: { used: number; limit: number | null };
  /** Set while the last question is being edited. */
  editing: string | null;
  onSend: (text: string, images: ImageInput[]) => Promise<boolean>;
  onStop: () => void;
  onEditLast: () => void;
  onCancelEdit: () => void;
}

function readImage(file: File): Promise<ImageInput> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve({ name: file.name || "pasted image", mime: file.type, base64: url.slice(url.indexOf(",") + 1) });
    };
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** A chip sent as an image: the engine reads its files, nothing crosses the IPC twice. */
function captureInput(c: Capture): ImageInput {
  return { name: c.source, mime: c.format === "png" ? "image/png" : "image/jpeg", base64: "", capture: c.id };
}

const CAPTURE_MODES: { value: CaptureMode; label: string }[] = [
  { value: "fullscreen", label: "Screen" },
  { value: "precision", label: "Region" },
  { value: "window", label: "Window" },
  { value: "none", label: "Off" },
];

export function Composer(props: Props) {
  const { streaming, models, model, onModel, usage, editing, onSend, onStop, onEditLast, onCancelEdit } = props;
  const [text, setText] = useState(() => localStorage.getItem(DRAFT_KEY) ?? "");
  const [images, setImages] = useState<ImageInput[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const [needsVision, setNeedsVision] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  const captures = useCaptures();
  const { settings, setCapture } = useSettings();
  const capture = settings?.capture;

  // A new capture puts the cursor in the box: type the question, Enter.
  useEffect(() => {
    if (captures.focusTick > 0) box.current?.focus();
  }, [captures.focusTick]);
  const dictation = useDictation();
  const pushToTalk = settings?.voice.push_to_talk ?? "";

  // Editing puts the old question in the box (the draft comes back after).
  const [editingShown, setEditingShown] = useState<string | null>(null);
  if (editing !== editingShown) {
    setEditingShown(editing);
    if (editing !== null) setText(editing);
  }
  useEffect(() => {
    if (editing !== null) box.current?.focus();
  }, [editing]);

  const update = (value: string) => {
    setText(value);
    if (editing === null) localStorage.setItem(DRAFT_KEY, value);
  };

  const submit = async (value = text) => {
    if (streaming || !value.trim() || !model) return;
    const current = models.find((m) => m.id === model);
    const canSee = !current || current.capabilities.vision;
    let chips = captures.pending;
    // Caught here, before anything is sent: the question would be refused.
    if (!canSee && (images.length > 0 || chips.length > 0)) {
      setNeedsVision(true);
      return;
    }
    if (canSee && capture?.auto_screenshot && capture.mode === "fullscreen" && chips.length === 0 && images.length === 0) {
      chips = (await captures.take("fullscreen")) ?? [];
    }
    const sent = value;
    const attached = images;
    update("");
    setImages([]);
    setNotice(null);
    setNeedsVision(false);
    // Nothing typed is lost: a send that could not start puts the text back (chips stay).
    const ok = await onSend(sent, [...attached, ...chips.map(captureInput)]);
    if (!ok) {
      update(sent);
      setImages(attached);
    }
    await captures.refresh();
  };

  // Dictated text lands at the cursor (replacing a selection), and is sent only when the user
  // turned on "send after dictation". Texts that arrived while the composer was not on screen
  // (mini mode) are taken when it comes back.
  const latest = useRef({ text, submit });
  latest.current = { text, submit };
  useEffect(() => {
    const arrived = takeFinals();
    if (arrived.length === 0) return;
    const el = box.current;
    let { value, caret } = { value: latest.current.text, caret: el?.selectionEnd ?? latest.current.text.length };
    const start = el && document.activeElement === el ? el.selectionStart : caret;
    for (const [i, final] of arrived.entries()) {
      ({ value, caret } = insertAt(value, i === 0 ? start : caret, caret, final.text));
    }
    update(value);
    if (arrived.some((f) => f.send)) {
      void latest.current.submit(value);
    } else if (el) {
      el.focus();
      requestAnimationFrame(() => el.setSelectionRange(caret, caret));
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs when a dictation ends
  }, [dictation.phase]);

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void submit();
    } else if (e.key === "Escape") {
      if (dictation.phase === "listening") void cancelDictation();
      else if (streaming) onStop();
      else if (editing !== null) {
        onCancelEdit();
        update(localStorage.getItem(DRAFT_KEY) ?? "");
      }
    } else if (e.key === "ArrowUp" && text === "" && !streaming) {
      e.preventDefault();
      onEditLast();
    }
  };

  const addFiles = async (files: File[]) => {
    const pictures = files.filter((f) => f.type.startsWith("image/"));
    if (pictures.length === 0) return false;
    const read = await Promise.all(pictures.map(readImage));
    setImages((current) => [...current, ...read]);
    return true;
  };

  const onPaste = (e: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = Array.from(e.clipboardData.files);
    if (files.some((f) => f.type.startsWith("image/"))) {
      e.preventDefault();
      void addFiles(files);
      return;
    }
    const pasted = e.clipboardData.getData("text");
    if (text.length + pasted.length > MAX_MESSAGE_CHARS) {
      e.preventDefault();
      setNotice(
        `That paste has ${pasted.length.toLocaleString()} characters; a message holds at most ${MAX_MESSAGE_CHARS.toLocaleString()}. Trim it, or split it over several messages.`,
      );
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    void addFiles(Array.from(e.dataTransfer.files));
  };

  const current = models.find((m) => m.id === model);
  const visionModels = models.filter((m) => m.capabilities.vision);
  const ratio = usage.limit ? Math.min(1, usage.used / usage.limit) : 0;
  return (
    <form
      className={editing !== null ? "composer editing" : "composer"}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onDragOver={(e) => e.preventDefault()}
      onDrop={onDrop}
    >
      {editing !== null && <div className="composer-note">Editing your last question · Esc cancels</div>}
      {notice && (
        <div className="composer-note warn" role="alert">
          {notice}
        </div>
      )}
      {captures.failure && (
        <div className="composer-note warn" role="alert">
          {captures.failure}{" "}
          <button type="button" className="link" onClick={captures.dismiss}>
            Dismiss
          </button>
        </div>
      )}
      {dictation.notice && (
        <div className={dictation.notice.kind === "warning" ? "composer-note" : "composer-note warn"} role="alert">
          {dictation.notice.text}{" "}
          <button type="button" className="link" onClick={dismissNotice}>
            Dismiss
          </button>
        </div>
      )}
      {needsVision && current && (
        <div className="composer-note warn vision-needed" role="alert">
          {current.name} cannot read images.{" "}
          {visionModels.length > 0 ? (
            <>
              Send with{" "}
              {visionModels.slice(0, 4).map((m) => (
                <button
                  key={m.id}
                  type="button"
                  className="link"
                  onClick={() => {
                    onModel(m.id);
                    setNeedsVision(false);
                  }}
                >
                  {m.id}
                </button>
              ))}
              , or remove the images.
            </>
          ) : (
            "No installed model reads images: pull one (e.g. ollama pull qwen3-vl), or remove the images."
          )}
        </div>
      )}
      {dictation.phase !== "idle" && (
        <div className="dictation-partial" aria-live="polite" aria-label="Dictated so far">
          {dictation.partial || (dictation.phase === "transcribing" ? "Transcribing…" : "Listening…")}
        </div>
      )}
      {images.length + captures.pending.length > 0 && (
        <div className="chips">
          <CaptureChips captures={captures.pending} onRemove={(id) => void captures.remove(id)} />
          {images.map((img, i) => (
            <span key={i} className="chip">
              {img.name}
              <button type="button" aria-label={`Remove ${img.name}`} onClick={() => setImages(images.filter((_, j) => j !== i))}>
                ×
              </button>
            </span>
          ))}
          {current && !current.capabilities.vision && <span className="chip warn">{current.name} cannot read images</span>}
        </div>
      )}
      <textarea
        ref={box}
        aria-label="Message"
        placeholder={model ? "Ask anything" : "No model yet: download one above or in Settings, start Ollama, or add a key"}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        value={text}
        onChange={(e) => update(e.target.value)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
      />
      <div className="composer-bar">
        <select aria-label="Model" value={model ?? ""} onChange={(e) => onModel(e.target.value)} disabled={streaming}>
          {!model && <option value="">No model</option>}
          {model && !current && <option value={model}>{model}</option>}
          {models.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
            </option>
          ))}
        </select>
        {capture && (
          <>
            <select
              aria-label="Capture mode"
              title={`What ${capture.shortcut || "the screenshot shortcut"} captures`}
              value={capture.mode}
              onChange={(e) => void setCapture({ ...capture, mode: e.target.value as CaptureMode })}
            >
              {CAPTURE_MODES.map((m) => (
                <option key={m.value} value={m.value}>
                  {m.label}
                </option>
              ))}
            </select>
            <button
              type="button"
              className="icon-button"
              aria-label="Capture the screen"
              title={`Capture (${capture.shortcut || "no shortcut"})`}
              disabled={capture.mode === "none"}
              onClick={() => void captures.take()}
            >
              <CaptureIcon />
            </button>
          </>
        )}
        <span
          className="gauge"
          title={`Context: ${usage.used.toLocaleString()} of ${usage.limit ? usage.limit.toLocaleString() : "?"} tokens`}
          aria-label="Context used"
        >
          <span className="gauge-bar">
            <span style={{ width: `${ratio * 100}%` }} className={ratio > 0.85 ? "full" : undefined} />
          </span>
          {formatTokens(usage.used)}
          {usage.limit ? ` / ${formatTokens(usage.limit)}` : ""}
        </span>
        <MicButton shortcut={pushToTalk} />
        {streaming ? (
          <button type="button" className="icon-button stop" aria-label="Stop" title="Stop (Esc)" onClick={onStop}>
            ■
          </button>
        ) : (
          <button
            type="submit"
            className="icon-button send"
            aria-label="Send"
            title="Send (Enter)"
            disabled={!text.trim() || !model}
          >
            <SendIcon />
          </button>
        )}
      </div>
    </form>
  );
}
