// The layout guard: at the size the window really has, every visible control can be reached and
// every text can be read. Run in the page; returns the problems found, in words.
//
// - the page does not scroll sideways, nor does any area in it but code, terminals and fields;
// - no box that is not meant to scroll has been scrolled (its content shifted out of reach);
// - each visible interactive element lies wholly inside the window (or, inside a scrolling
//   area, is reachable by scrolling it), and is not covered by another element at its centre
//   or either end;
// - no text is wider than its own box (cut off, or spilling over its neighbours), unless the
//   box is meant to scroll or shows an ellipsis, or is only for screen readers (`.sr-only`);
// - a select shows the start of its chosen option, at least six characters of it.

/** Runs the checks in the page; `[]` when the layout is sound. */
export async function layoutProblems(browser) {
  return browser.execute(() => {
    const problems = [];
    const root = document.documentElement;
    const vw = root.clientWidth;
    const vh = root.clientHeight;
    if (root.scrollWidth > vw + 1) problems.push(`the page scrolls sideways (${root.scrollWidth}px in a ${vw}px window)`);

    const name = (el) => {
      const label =
        el.getAttribute("aria-label") || el.getAttribute("title") || el.textContent || el.getAttribute("placeholder") || el.closest("label")?.textContent || "";
      return `${el.tagName.toLowerCase()} "${label.trim().replace(/\s+/g, " ").slice(0, 40)}"`;
    };
    const shown = (el) => {
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) return false;
      for (let e = el; e; e = e.parentElement) {
        const st = getComputedStyle(e);
        if (st.display === "none" || st.visibility === "hidden" || Number(st.opacity) === 0) return false;
      }
      return getComputedStyle(el).pointerEvents !== "none";
    };
    function* ancestors(el) {
      for (let e = el; e && e !== document.body; e = e.parentElement) yield e;
    }
    const scroller = (el) => {
      for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
        const st = getComputedStyle(e);
        if (/(auto|scroll)/.test(st.overflowY + st.overflowX)) return e;
      }
      return null;
    };
    const inside = (r, box) => r.left >= box.left - 1 && r.top >= box.top - 1 && r.right <= box.right + 1 && r.bottom <= box.bottom + 1;
    const windowBox = { left: 0, top: 0, right: vw, bottom: vh };

    const controls = document.querySelectorAll(
      'button, a[href], input:not([type="hidden"]), select, textarea, summary, [role="button"], [role="tab"], [tabindex]:not([tabindex="-1"])',
    );
    for (const el of controls) {
      if (!shown(el) || el.closest("[inert]")) continue;
      const r = el.getBoundingClientRect();
      // Inside every scrolling area around it, it is on screen now and must be inside the
      // window; outside one, it is reached by scrolling that area (unless it sticks out
      // sideways where nothing scrolls sideways).
      let onScreen = true;
      for (let area = scroller(el); area; area = scroller(area)) {
        const box = area.getBoundingClientRect();
        if (inside(r, box)) continue;
        if ((r.left < box.left - 1 || r.right > box.right + 1) && !/(auto|scroll)/.test(getComputedStyle(area).overflowX)) {
          problems.push(`${name(el)} sticks out of its area sideways`);
        }
        onScreen = false;
        break;
      }
      if (!onScreen) continue;
      if (!inside(r, windowBox)) {
        problems.push(`${name(el)} is outside the window (${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)} in ${vw}x${vh})`);
        continue;
      }
      // A link broken over two lines is hit on its first line (its box's centre may be neither).
      // Its centre and both ends are tried: a floating button once covered only the end of
      // "Regenerate", and its centre was clear.
      const first = el.getClientRects()[0] ?? r;
      const inset = Math.min(4, first.width / 4);
      const y = Math.min(vh - 1, Math.max(0, first.top + first.height / 2));
      for (const [i, at] of [first.left + first.width / 2, first.left + inset, first.right - inset].entries()) {
        const x = Math.min(vw - 1, Math.max(0, at));
        const hit = document.elementFromPoint(x, y);
        // A control inside a label (the segmented radios) is reached through its label. At an
        // end, a rounded corner or a clipped edge gives the point to an element around the
        // control: only something that is not around it covers it there.
        const reached =
          hit &&
          (el === hit || el.contains(hit) || (hit.tagName === "LABEL" && hit.contains(el)) || hit.closest("label")?.contains(el) || (i > 0 && hit.contains(el)));
        // Under a header that stays in view (Settings' tabs) it has scrolled away, like any other.
        const underStickyHeader = hit && !reached && [...ancestors(hit)].some((a) => /sticky|fixed/.test(getComputedStyle(a).position) && !a.contains(el));
        if (!reached && !underStickyHeader) {
          problems.push(`${name(el)} is covered by ${hit ? name(hit) : "nothing"}`);
          break;
        }
      }
    }

    // An area that is not meant to scroll but has been scrolled (a script's or the focus's
    // scrollIntoView moves boxes whose overflow is hidden too): what it holds is shifted out of
    // sight with no scroll bar to bring it back.
    for (const el of [root, ...document.querySelectorAll("body, body *")]) {
      if (el.scrollTop === 0 && el.scrollLeft === 0) continue;
      const st = getComputedStyle(el);
      if (/(auto|scroll)/.test(st.overflowY) || /(auto|scroll)/.test(st.overflowX) || el.closest("pre, code, table, .xterm, input, textarea, select")) continue;
      const what = el === root ? "the page" : `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.className ? `.${String(el.className).split(" ")[0]}` : ""}`;
      problems.push(`${what} does not scroll but is scrolled by ${el.scrollLeft},${el.scrollTop} px (${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight})`);
    }

    // An area that scrolls sideways, other than code, a terminal or a field (meant to): one long
    // line in a code block once pushed the whole message list sideways, its buttons 300 px off.
    for (const el of document.querySelectorAll("body *")) {
      if (el.scrollWidth <= el.clientWidth + 1 || !/(auto|scroll)/.test(getComputedStyle(el).overflowX)) continue;
      if (!shown(el) || el.closest("pre, code, table, .xterm, input, textarea, select")) continue;
      const what = `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(" ")[0]}` : ""}`;
      problems.push(`${what} scrolls sideways (${el.scrollWidth}px in ${el.clientWidth}px)`);
    }

    // A select shows its chosen option's text itself: a narrow one showed two letters of an
    // Arabic word, and a model's id (left to right) in a right-to-left page showed its end, not
    // its start. Each must show at least its first six characters (all, if shorter), from the
    // start. Measured with the select's own font; the arrow's room is taken as 20 px.
    const canvas = document.createElement("canvas").getContext("2d");
    for (const el of document.querySelectorAll("select")) {
      if (!shown(el) || el.closest("[inert]") || el.multiple || el.size > 1) continue;
      const text = (el.selectedOptions[0]?.textContent ?? "").trim();
      if (!text) continue;
      const st = getComputedStyle(el);
      canvas.font = st.font;
      const room = el.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 20;
      const whole = canvas.measureText(text).width;
      const start = canvas.measureText([...text].slice(0, 6).join("")).width;
      if (room < start - 1) problems.push(`${name(el)} shows too little of "${text.slice(0, 30)}" (${Math.round(room)}px for ${Math.round(start)}px)`);
      else if (whole > room + 1 && st.direction === "rtl" && /^[A-Za-z0-9]/.test(text)) {
        problems.push(`${name(el)} cuts the start of "${text.slice(0, 30)}" (left to right text in a right-to-left select)`);
      }
    }

    // Text wider than its own box: each text's lines measured against the nearest box around
    // it (a select's option text inside the select is the control's own business).
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    const reported = new Set();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) continue;
      const parent = node.parentElement;
      // `.sr-only` is read by screen readers and drawn nowhere: a 1px box on purpose.
      if (!parent || !shown(parent) || parent.closest("select, option, pre, code, .xterm, textarea, .sr-only")) continue;
      let box = parent;
      while (box.parentElement && /^(inline|contents)$/.test(getComputedStyle(box).display)) box = box.parentElement;
      if (reported.has(box)) continue;
      const st = getComputedStyle(box);
      if (/(auto|scroll)/.test(st.overflowX) || getComputedStyle(parent).textOverflow === "ellipsis" || st.textOverflow === "ellipsis") continue;
      const b = box.getBoundingClientRect();
      range.selectNodeContents(node);
      const wide = [...range.getClientRects()].some((t) => t.width > 0 && (t.left < b.left - 1 || t.right > b.right + 1));
      if (wide) {
        reported.add(box);
        const text = node.textContent.trim().replace(/\s+/g, " ").slice(0, 40);
        problems.push(`text "${text}" is wider than its ${box.tagName.toLowerCase()}${box.className ? `.${String(box.className).split(" ")[0]}` : ""} (cut, or over its neighbours)`);
      }
    }
    return problems;
  });
}
