import { describe, expect, it } from "vitest";
import { dayLabel, groupByDay } from "./time";

const at = (y: number, m: number, d: number, h = 12) => new Date(y, m - 1, d, h).getTime();
const NOW = at(2026, 11, 21, 9);

describe("dayLabel", () => {
  it("names today and yesterday by local day, not by 24-hour distance", () => {
    expect(dayLabel(at(2026, 11, 21, 0), NOW)).toBe("Today");
    expect(dayLabel(at(2026, 11, 20, 23), NOW)).toBe("Yesterday");
    expect(dayLabel(at(2026, 11, 20, 0), NOW)).toBe("Yesterday");
  });

  it("uses the date for older days, with the year only when it differs", () => {
    const older = dayLabel(at(2026, 11, 2), NOW);
    expect(older).not.toMatch(/Today|Yesterday|2026/);
    expect(older).toMatch(/2/);
    expect(dayLabel(at(2025, 3, 14), NOW)).toMatch(/2025/);
  });
});

describe("groupByDay", () => {
  it("groups newest-first items by day and keeps their order", () => {
    const items = [
      { id: "a", t: at(2026, 11, 21, 8) },
      { id: "b", t: at(2026, 11, 21, 7) },
      { id: "c", t: at(2026, 11, 20, 22) },
      { id: "d", t: at(2026, 10, 1) },
    ];
    const groups = groupByDay(items, (i) => i.t, NOW);
    expect(groups.map((g) => g.label).slice(0, 2)).toEqual(["Today", "Yesterday"]);
    expect(groups.map((g) => g.items.map((i) => i.id))).toEqual([["a", "b"], ["c"], ["d"]]);
  });

  it("returns nothing for nothing", () => {
    expect(groupByDay([], () => 0, NOW)).toEqual([]);
  });
});
