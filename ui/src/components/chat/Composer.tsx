import { useCallback, useEffect, useLayoutEffect, useRef, useState, type ClipboardEvent, type KeyboardEvent, type ReactNode } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg, plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Capture, CaptureMode, FileInput, FoundPassage, Hit, ImageInput, ModelInfo, SelectionInput } from "../../bindings";
// The engine's limit (generated): a bigger paste is refused before it reaches the text box.
// `length` counts UTF-16 units, never fewer than the engine's characters, so nothing passes here
// that the engine refuses.
import { MAX_MESSAGE_CHARS } from "../../bindings";
import { commands } from "../../ipc";
import { fileInputs, useAttachedFiles } from "../../lib/attachedFiles";
import { attempt } from "../../lib/failures";
import { useCaptures } from "../../lib/captures";
import { keepsHoldings, swapHoldings } from "../../lib/chatHoldings";
import { atQuery, removeQuery, useFileSearch } from "../../lib/filePicker";
import { hashQuery, passageInput, usePassageSearch } from "../../lib/knowledgePicker";
import { useWindowDrop } from "../../lib/windowDrop";
import { formatNumber, formatTokens } from "../../lib/format";
import { cancelDictation, dismissNotice, insertAt, takeFinals, useDictation } from "../../lib/dictation";
import { useSettings } from "../../lib/settings";
import { useHoldsUnsentWork } from "../../lib/unsentWork";
import { FOCUS_COMPOSER, PUT_IN_COMPOSER } from "../../lib/shortcuts";
import { restoreSelection, takeSelectionForSend, useSelection } from "../../lib/selection";
import { SelectionChip, SelectionProblem } from "./SelectionChip";
import { CaptureChips } from "../capture/CaptureChips";
import { CaptureIcon, SendIcon } from "../Icons";
import { ComposerNote } from "./ComposerNote";
import { WithCode } from "../InlineCode";
import { FileChips, FileNotices } from "./FileChips";
import { FilePicker, PICKER_ID, hitId } from "./FilePicker";
import { KnowledgePicker, PASSAGES_ID, passageId, shortPlace } from "./KnowledgePicker";
import { MicButton } from "./MicButton";
import { TalkButton } from "./Conversation";
import { questionNotSent } from "../../lib/conversation";

const DRAFT_KEY = "perch.draft";

interface Props {
  /** The chat on screen (`chatKey`): what the composer holds belongs to it. */
  chat: string;
  streaming: boolean;
  models: ModelInfo[];
  model: string | null;
  onModel: (id: string) => void;
  /** Tokens the last exchange used, and how many the model reads. */
  usage: { used: number; limit: number | null };
  /** Set while the last question is being edited. */
  editing: string | null;
  /** `model`: another model than the conversation's answers this one (a quick action's). */
  onSend: (text: string, images: ImageInput[], files: FileInput[], selections: SelectionInput[], model?: string) => Promise<boolean>;
  onStop: () => void;
  onEditLast: () => void;
  onCancelEdit: () => void;
  /** The page's own buttons, in the row beside the gauge (the terminal's). */
  tools?: ReactNode;
}

/** A picture as the engine takes it; `unnamed` names one pasted without a file name. */
function readImage(file: File, unnamed: string): Promise<ImageInput> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve({ name: file.name || unnamed, mime: file.type, base64: url.slice(url.indexOf(",") + 1) });
    };
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** `image` added to `list`, unless the same picture is there already (picked or dropped twice). */
function withImage(list: ImageInput[], image: ImageInput): ImageInput[] {
  return list.some((i) => i.name === image.name && i.base64 === image.base64) ? list : [...list, image];
}

/** A chip sent as an image: the engine reads its files, nothing crosses the IPC twice. */
function captureInput(c: Capture): ImageInput {
  return { name: c.source, mime: c.format === "png" ? "image/png" : "image/jpeg", base64: "", capture: c.id };
}

const CAPTURE_MODES: { value: CaptureMode; label: MessageDescriptor }[] = [
  { value: "fullscreen", label: msg({ message: "Screen", comment: "capture mode: the whole screen" }) },
  { value: "precision", label: msg({ message: "Region", comment: "capture mode: a region dragged on the screen" }) },
  { value: "window", label: msg({ message: "Window", comment: "capture mode: one window" }) },
  { value: "none", label: msg({ message: "Off", comment: "capture mode: no screenshots" }) },
];

export function Composer(props: Props) {
  const { t } = useLingui();
  const { streaming, models, model, onModel, usage, editing, onSend, onStop, onEditLast, onCancelEdit } = props;
  const selection = useSelection();
  const [text, setText] = useState(() => localStorage.getItem(DRAFT_KEY) ?? "");
  const [images, setImages] = useState<ImageInput[]>([]);
  const [notice, setNotice] = useState<string | null>(null);
  const [needsVision, setNeedsVision] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  const captures = useCaptures(props.chat);
  const addImage = useCallback((image: ImageInput) => setImages((list) => withImage(list, image)), []);
  const attached = useAttachedFiles(addImage);
  // Screenshots left in other chats are offered here, until brought or the note is dismissed
  // (a new one taken elsewhere shows it again).
  const [elsewhereSeen, setElsewhereSeen] = useState<string[]>([]);
  const elsewhereShown = captures.elsewhere.filter((c) => !elsewhereSeen.includes(c.id));
  // Another chat on screen: this one's pictures and files are set aside, that one's come back.
  const [holdingFor, setHoldingFor] = useState(props.chat);
  if (holdingFor !== props.chat) {
    setHoldingFor(props.chat);
    if (!keepsHoldings(holdingFor, props.chat)) {
      const back = swapHoldings(holdingFor, props.chat, { images, files: attached.files });
      setImages(back.images);
      attached.replace(back.files);
    }
  }
  // The `@` picker: open while the cursor in the box ends an `@query`, unless Esc closed it for
  // that `@`.
  const [caret, setCaret] = useState(0);
  const [focused, setFocused] = useState(false);
  const [closedAt, setClosedAt] = useState<number | null>(null);
  const [active, setActive] = useState({ query: "", index: 0 });
  const trigger = atQuery(text, caret);
  const pickerQuery = focused && trigger && trigger.start !== closedAt ? trigger.query : null;
  // The `#` picker: passages of the knowledge folders for the `#words` at the cursor, picked
  // into chips that go with the question. Closed while no folder is indexed.
  const hash = trigger ? null : hashQuery(text, caret);
  const hashWords = focused && hash && hash.start !== closedAt ? hash.query : null;
  const passageSearch = usePassageSearch(hashWords);
  const found = passageSearch.passages ?? [];
  const passageQuery = hashWords !== null && passageSearch.passages !== null ? hashWords : null;
  const [activePassage, setActivePassage] = useState({ query: "", index: 0 });
  const passageIndex = activePassage.query === passageQuery ? Math.min(activePassage.index, Math.max(0, found.length - 1)) : 0;
  const [passages, setPassages] = useState<FoundPassage[]>([]);
  const passageTokens = passages.reduce((n, p) => n + Math.ceil(p.text.length / 4), 0);
  // A folder chosen in the picker, searched instead of the usual ones until the user goes back.
  const [root, setRoot] = useState<string | null>(null);
  const search = useFileSearch(pickerQuery, root);
  const chooseFolder = async () => {
    const picked = await attempt(t`Could not open the folder chooser`, commands.filesChooseFolder());
    if (picked) setRoot(picked);
    box.current?.focus(); // the dialog took the focus, and the picker shows only with it
  };
  // A reload (the page freed while hidden) keeps the draft, not these.
  useHoldsUnsentWork(
    images.length > 0 || attached.files.length > 0 || attached.tooLarge.length > 0 || passages.length > 0 || editing !== null,
  );
  const activeIndex = active.query === pickerQuery ? Math.min(active.index, Math.max(0, search.hits.length - 1)) : 0;
  const { settings, setCapture } = useSettings();
  const capture = settings?.capture;

  // The chat opens ready to type, unless something else has the focus; Ctrl+N asks again.
  useEffect(() => {
    const focus = () => box.current?.focus();
    if (!document.activeElement || document.activeElement === document.body) focus();
    window.addEventListener(FOCUS_COMPOSER, focus);
    return () => window.removeEventListener(FOCUS_COMPOSER, focus);
  }, []);

  const editingNow = useRef(editing !== null);
  useEffect(() => {
    editingNow.current = editing !== null;
  }, [editing]);
  // An app's suggested message, once the user took it: after the draft, never sent by itself.
  useEffect(() => {
    const put = (e: Event) => {
      const added = (e as CustomEvent<unknown>).detail;
      if (typeof added !== "string") return;
      // After what the box holds now (a question being edited included); the draft is saved
      // only when it is the draft in the box.
      const before = box.current?.value ?? "";
      const next = (before.trim() ? `${before}\n${added}` : added).slice(0, MAX_MESSAGE_CHARS);
      setText(next);
      if (!editingNow.current) localStorage.setItem(DRAFT_KEY, next);
      box.current?.focus();
    };
    window.addEventListener(PUT_IN_COMPOSER, put);
    return () => window.removeEventListener(PUT_IN_COMPOSER, put);
  }, []);

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

  /** Typed or moved: where the cursor is decides whether the picker shows. */
  const typed = (value: string, at: number) => {
    update(value);
    setCaret(at);
    if (!atQuery(value, at) && !hashQuery(value, at)) setClosedAt(null);
  };

  const pick = (hit: Hit) => {
    if (!trigger) return;
    const { value, caret: at } = removeQuery(text, trigger.start, caret);
    typed(value, at);
    caretAfter.current = at;
    box.current?.focus();
    void attached.attach(hit.path);
  };
  const pickPassage = (passage: FoundPassage) => {
    if (!hash) return;
    const { value, caret: at } = removeQuery(text, hash.start, caret);
    typed(value, at);
    caretAfter.current = at;
    box.current?.focus();
    setPassages((list) => (list.some((p) => p.place === passage.place) ? list : [...list, passage]));
  };
  // The cursor goes where the `@` or `#` was once the new text is in the box (before any more typing).
  const caretAfter = useRef<number | null>(null);
  useLayoutEffect(() => {
    if (caretAfter.current === null) return;
    box.current?.setSelectionRange(caretAfter.current, caretAfter.current);
    caretAfter.current = null;
  });

  // Files dropped on the window are attached as if picked.
  const dropping = useWindowDrop((paths) => paths.forEach((path) => void attached.attach(path)));

  const overLimitFor = useRef<string | null>(null);
  /** Sends `value`; whether the question went (it stays in the box, with why, when not).
   * `fromBox`: `value` is what the box holds (a dictated text just put there, which this
   * render's `text` does not show yet), so the box is emptied when it goes. */
  const submit = async (value = text, withModel?: string, fromBox = value === text): Promise<boolean> => {
    if (streaming || !value.trim()) return false;
    // A quick action's own model answers when it is still offered; else the conversation's.
    const other = withModel && models.some((m) => m.id === withModel) ? withModel : undefined;
    const model = other ?? props.model;
    const current = models.find((m) => m.id === model);
    // Past the model's context the start of the conversation (or of this message) is cut:
    // said once, and a second Enter sends anyway.
    const tokens = usage.used + attached.tokens + passageTokens + Math.ceil(value.length / 4);
    if (usage.limit && tokens > usage.limit && overLimitFor.current !== value) {
      overLimitFor.current = value;
      const about = formatNumber(tokens);
      const reads = formatNumber(usage.limit);
      const modelName = current?.name;
      setNotice(
        modelName !== undefined
          ? t`This is about ${about} tokens with the conversation so far, and ${modelName} reads ${reads}: what does not fit is left out. Shorten it, or press Enter again to send anyway.`
          : t`This is about ${about} tokens with the conversation so far, and the model reads ${reads}: what does not fit is left out. Shorten it, or press Enter again to send anyway.`,
      );
      return false;
    }
    if (!model) {
      // The text stays in the box; say what would let it go.
      setNotice(
        t`No model to answer yet: download a small one above, add a GGUF file or a key in Settings -> Models, or start Ollama. Your text stays here.`,
      );
      return false;
    }
    const canSee = !current || current.capabilities.vision;
    let chips = captures.pending;
    // Caught here, before anything is sent: the question would be refused.
    if (!canSee && (images.length > 0 || chips.length > 0)) {
      setNeedsVision(true);
      return false;
    }
    if (canSee && capture?.auto_screenshot && capture.mode === "fullscreen" && chips.length === 0 && images.length === 0) {
      chips = (await captures.take("fullscreen")) ?? [];
    }
    const sent = value;
    const pictures = images;
    // An edit replaces the question's text only: the file and selection chips wait for the next question.
    const files = editing === null ? attached.take() : [];
    const picked = editing === null ? passages : [];
    if (picked.length > 0) setPassages([]);
    const selection = editing === null ? takeSelectionForSend() : null;
    // A quick action on the selection sends its own words: what is in the box stays there.
    if (fromBox) update("");
    setImages([]);
    setNotice(null);
    setNeedsVision(false);
    // Nothing typed or picked is lost: a send that could not start puts it back (capture chips stay).
    const selections = selection ? [{ text: selection.text, app: selection.app }] : [];
    const inputs = [...fileInputs(files), ...picked.map(passageInput)];
    const ok = await onSend(sent, [...pictures, ...chips.map(captureInput)], inputs, selections, other);
    if (!ok) {
      if (fromBox) update(sent);
      setImages(pictures);
      attached.restore(files);
      if (picked.length > 0) setPassages(picked);
      if (selection) restoreSelection(selection);
    }
    await captures.refresh();
    return ok;
  };

  // Dictated text lands at the cursor (replacing a selection), and is sent only when the user
  // turned on "send after dictation". Texts that arrived while the composer was not on screen
  // (mini mode) are taken when it comes back.
  const latest = useRef({ text, submit, streaming });
  latest.current = { text, submit, streaming };
  const sendWhenAnswered = useRef(false);
  const sendOrSay = (sent: boolean) => {
    if (!sent) questionNotSent();
  };
  useEffect(() => {
    if (streaming || !sendWhenAnswered.current) return;
    sendWhenAnswered.current = false;
    void latest.current.submit().then(sendOrSay);
  }, [streaming]);
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
      // While an answer is still written (a hands-free question talked over it, which stops
      // it), the question goes once it has ended.
      if (latest.current.streaming) sendWhenAnswered.current = true;
      else void latest.current.submit(value, undefined, true).then(sendOrSay);
    } else if (el) {
      el.focus();
      requestAnimationFrame(() => el.setSelectionRange(caret, caret));
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runs when a dictation ends
  }, [dictation.phase]);

  /** The picker's keys, while it is open; true when the key was its. */
  const pickerKey = (e: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (pickerQuery === null || !trigger) return false;
    const hits = search.hits;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (hits.length > 0) {
        const step = e.key === "ArrowDown" ? 1 : hits.length - 1;
        setActive({ query: pickerQuery, index: (activeIndex + step) % hits.length });
      }
      return true;
    }
    const tab = e.key === "Tab" && !e.shiftKey;
    if ((e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) || tab) {
      // Enter with nothing found (yet) is not a pick: with the search over, it sends as usual.
      if (hits.length === 0 && (tab || search.done)) return false;
      e.preventDefault();
      if (hits.length > 0) pick(hits[activeIndex]);
      return true;
    }
    if (e.key === "Escape") {
      // Closes the picker only: no Stop, no cancelled edit, the text stays.
      e.preventDefault();
      setClosedAt(trigger.start);
      return true;
    }
    return false;
  };

  /** The `#` picker's keys, while it is open; true when the key was its. */
  const passageKey = (e: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (passageQuery === null || !hash) return false;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (found.length > 0) {
        const step = e.key === "ArrowDown" ? 1 : found.length - 1;
        setActivePassage({ query: passageQuery, index: (passageIndex + step) % found.length });
      }
      return true;
    }
    const tab = e.key === "Tab" && !e.shiftKey;
    if ((e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) || tab) {
      // Nothing offered: Enter sends as usual.
      if (found.length === 0) return false;
      e.preventDefault();
      pickPassage(found[passageIndex]);
      return true;
    }
    if (e.key === "Escape") {
      e.preventDefault();
      setClosedAt(hash.start);
      return true;
    }
    return false;
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (pickerKey(e) || passageKey(e)) return;
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void submit();
    } else if (e.key === "Escape") {
      // Handled here: the page's own Esc (Stop) must not act on it a second time.
      e.preventDefault();
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

  // Pasted pictures; dropped files, pictures too, come through the window's drop (useWindowDrop).
  const addPictures = async (files: File[]) => {
    const unnamed = t({ message: "pasted image", comment: "the name of a picture pasted without a file name, shown on its chip" });
    const read = await Promise.all(files.filter((f) => f.type.startsWith("image/")).map((f) => readImage(f, unnamed)));
    setImages((current) => read.reduce(withImage, current));
  };

  const onPaste = (e: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = Array.from(e.clipboardData.files);
    if (files.some((f) => f.type.startsWith("image/"))) {
      e.preventDefault();
      void addPictures(files);
      return;
    }
    const pasted = e.clipboardData.getData("text");
    if (text.length + pasted.length > MAX_MESSAGE_CHARS) {
      e.preventDefault();
      const length = formatNumber(pasted.length);
      const most = formatNumber(MAX_MESSAGE_CHARS);
      setNotice(t`That paste has ${length} characters; a message holds at most ${most}. Trim it, or split it over several messages.`);
    }
  };

  const current = models.find((m) => m.id === model);
  const visionModels = models.filter((m) => m.capabilities.vision);
  // The next question carries the attached files and the draft itself (about four
  // characters a token, as the engine counts).
  const draftTokens = text.trim() ? Math.ceil(text.length / 4) : 0;
  const used = usage.used + attached.tokens + passageTokens + draftTokens;
  const ratio = usage.limit ? Math.min(1, used / usage.limit) : 0;
  const composerClass = ["composer", editing !== null && "editing", dropping && "dropping"].filter(Boolean).join(" ");
  // The gauge's numbers, in words on hover and to a screen reader.
  const usedCount = formatNumber(used);
  const limitCount = usage.limit ? formatNumber(usage.limit) : "?";
  const inFiles = formatNumber(attached.tokens + passageTokens);
  const inDraft = formatNumber(draftTokens);
  const gaugeTitle =
    attached.tokens + passageTokens > 0
      ? draftTokens > 0
        ? t`Context: ${usedCount} of ${limitCount} tokens (${inFiles} in attached files), about ${inDraft} in the message being written`
        : t`Context: ${usedCount} of ${limitCount} tokens (${inFiles} in attached files)`
      : draftTokens > 0
        ? t`Context: ${usedCount} of ${limitCount} tokens, about ${inDraft} in the message being written`
        : t`Context: ${usedCount} of ${limitCount} tokens`;
  const usedShort = formatTokens(used);
  const limitShort = usage.limit ? formatTokens(usage.limit) : "";
  const gaugeText = usage.limit
    ? ratio > 0.85
      ? t`${usedShort} of ${limitShort} tokens, nearly full`
      : t`${usedShort} of ${limitShort} tokens`
    : undefined;
  const shortcut = capture?.shortcut;
  const modelName = current?.name;
  // The vision models offered when the chosen one cannot read the images.
  const visionChoices = visionModels.slice(0, 4).map((m) => (
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
  ));
  return (
    <form
      className={composerClass}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {pickerQuery !== null && (
        <FilePicker
          search={search}
          active={activeIndex}
          onPick={pick}
          onActive={(index) => setActive({ query: pickerQuery, index })}
          root={root}
          onChooseFolder={() => void chooseFolder()}
          onUsualFolders={() => setRoot(null)}
        />
      )}
      {passageQuery !== null && (
        <KnowledgePicker
          search={passageSearch}
          active={passageIndex}
          onPick={pickPassage}
          onActive={(index) => setActivePassage({ query: passageQuery, index })}
        />
      )}
      {editing !== null && (
        <div className="composer-note">
          {attached.files.length > 0 ? (
            <Trans>Editing your last question · Esc cancels · the files go with your next question</Trans>
          ) : (
            <Trans>Editing your last question · Esc cancels</Trans>
          )}
        </div>
      )}
      {dropping && (
        <div className="composer-note">
          <Trans>Drop to attach</Trans>
        </div>
      )}
      <FileNotices attached={attached} />
      {notice && <ComposerNote warn>{notice}</ComposerNote>}
      {captures.failure && (
        <ComposerNote warn onDismiss={captures.dismiss}>
          {captures.failure}
        </ComposerNote>
      )}
      {elsewhereShown.length > 0 && (
        <div className="composer-note captures-elsewhere">
          {t`${plural(elsewhereShown.length, {
            one: "A screenshot waits in the chat where it was taken.",
            other: "# screenshots wait in the chats where they were taken.",
          })}`}{" "}
          <button type="button" className="link" onClick={captures.bringHere}>
            <Trans comment="link: move screenshots taken in other chats into this one">Bring here</Trans>
          </button>{" "}
          <button type="button" className="link" onClick={() => setElsewhereSeen(captures.elsewhere.map((c) => c.id))}>
            <Trans comment="link: hide this note">Dismiss</Trans>
          </button>
        </div>
      )}
      {dictation.notice && (
        <ComposerNote warn={dictation.notice.kind !== "warning"} onDismiss={dismissNotice}>
          <WithCode text={dictation.notice.text} />
        </ComposerNote>
      )}
      {needsVision && current && (
        <div className="composer-note warn vision-needed" role="alert">
          {visionModels.length > 0 ? (
            <Trans comment="{visionChoices} are buttons, one per model that reads images">
              {modelName} cannot read images. Send with {visionChoices}, or remove the images.
            </Trans>
          ) : (
            <Trans>
              {modelName} cannot read images. No installed model reads images: pull one (e.g. ollama pull qwen3-vl), or remove the images.
            </Trans>
          )}
        </div>
      )}
      {dictation.phase !== "idle" && (
        <div className="dictation-partial" aria-live="polite" aria-label={t`Dictated so far`}>
          {dictation.partial || (dictation.phase === "transcribing" ? t`Transcribing…` : t`Listening…`)}
        </div>
      )}
      {selection.problem && <SelectionProblem problem={selection.problem} />}
      {selection.pending && (
        <SelectionChip selection={selection.pending} disabled={!!streaming || editing !== null} onAction={(prompt, withModel) => void submit(prompt, withModel)} />
      )}
      {images.length + captures.pending.length + attached.files.length + passages.length > 0 && (
        <div className="chips">
          <CaptureChips captures={captures.pending} onRemove={(id) => void captures.remove(id)} />
          <FileChips attached={attached} />
          {passages.map((p) => {
            const name = shortPlace(p);
            return (
              <span key={p.place} className="chip passage-chip" title={p.place} dir="ltr">
                {name}
                <button type="button" aria-label={t`Remove ${name}`} onClick={() => setPassages((list) => list.filter((q) => q.place !== p.place))}>
                  ×
                </button>
              </span>
            );
          })}
          {images.map((img, i) => {
            const name = img.name;
            return (
              <span key={i} className="chip">
                {name}
                <button type="button" aria-label={t`Remove ${name}`} onClick={() => setImages(images.filter((_, j) => j !== i))}>
                  ×
                </button>
              </span>
            );
          })}
          {current && !current.capabilities.vision && (
            <span className="chip warn">
              <Trans>{modelName} cannot read images</Trans>
            </span>
          )}
        </div>
      )}
      <textarea
        ref={box}
        aria-label={t({ message: "Message", comment: "the text box where the question is typed" })}
        placeholder={model ? t`Ask anything` : t`No model yet: download one above or in Settings, start Ollama, or add a key`}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        value={text}
        onChange={(e) => typed(e.target.value, e.target.selectionStart)}
        onSelect={(e) => setCaret(e.currentTarget.selectionStart)}
        onFocus={() => setFocused(true)}
        onBlur={() => setFocused(false)}
        onKeyDown={onKeyDown}
        aria-controls={
          pickerQuery !== null && search.hits.length > 0 ? PICKER_ID : passageQuery !== null && found.length > 0 ? PASSAGES_ID : undefined
        }
        aria-activedescendant={
          pickerQuery !== null && search.hits.length > 0
            ? hitId(activeIndex)
            : passageQuery !== null && found.length > 0
              ? passageId(passageIndex)
              : undefined
        }
        onPaste={onPaste}
      />
      <div className="composer-bar">
        {/* Styled by class, not by its label, which is translated. A model's id is not language:
            left to right in every page, so a right-to-left page cuts its end, not its start. */}
        <select
          className="model-select"
          dir={model ? "ltr" : undefined}
          aria-label={t`Model`}
          title={model ?? t`No model`}
          value={model ?? ""}
          onChange={(e) => onModel(e.target.value)}
          disabled={streaming}
        >
          {!model && (
            <option value="">
              <Trans>No model</Trans>
            </option>
          )}
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
              className="capture-mode"
              aria-label={t`Capture mode`}
              title={shortcut ? t`What ${shortcut} captures` : t`What the screenshot shortcut captures`}
              value={capture.mode}
              onChange={(e) => void setCapture({ ...capture, mode: e.target.value as CaptureMode })}
            >
              {CAPTURE_MODES.map((m) => (
                <option key={m.value} value={m.value}>
                  {t(m.label)}
                </option>
              ))}
            </select>
            <button
              type="button"
              className="icon-button"
              aria-label={t`Capture the screen`}
              title={shortcut ? t`Capture (${shortcut})` : t`Capture (no shortcut)`}
              disabled={capture.mode === "none"}
              onClick={() => void captures.take()}
            >
              <CaptureIcon />
            </button>
          </>
        )}
        {props.tools}
        <span
          className={ratio > 0.85 ? "gauge full" : "gauge"}
          title={gaugeTitle}
          aria-label={t`Context used`}
          // A meter when the model's window is known: its value said in words, "nearly full"
          // included, so the bar's colour is never the only sign.
          role={usage.limit ? "meter" : undefined}
          aria-valuemin={usage.limit ? 0 : undefined}
          aria-valuemax={usage.limit || undefined}
          aria-valuenow={usage.limit ? Math.min(used, usage.limit) : undefined}
          aria-valuetext={gaugeText}
        >
          <span className="gauge-bar">
            <span style={{ width: `${ratio * 100}%` }} className={ratio > 0.85 ? "full" : undefined} />
          </span>
          {usedShort}
          {usage.limit ? ` / ${limitShort}` : ""}
        </span>
        <MicButton shortcut={pushToTalk} />
        <TalkButton />
        {streaming ? (
          <button type="button" className="icon-button stop" aria-label={t({ message: "Stop", comment: "button: stop the answer" })} title={t`Stop (Esc)`} onClick={onStop}>
            ■
          </button>
        ) : (
          <button
            type="submit"
            className="icon-button send"
            aria-label={t({ message: "Send", comment: "button: send the question" })}
            title={t`Send (Enter)`}
            disabled={!text.trim() || !model}
          >
            <SendIcon />
          </button>
        )}
      </div>
    </form>
  );
}
