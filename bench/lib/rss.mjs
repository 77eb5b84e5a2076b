// Peak resident memory of a process and of its descendants, from /proc (Linux). VmHWM is the
// kernel's own high-water mark, so sampling only has to catch each process once before it exits.
import { readdirSync, readFileSync } from "node:fs";

function readStatus(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? NaN);
    return { ppid: field("PPid"), hwmKb: field("VmHWM") };
  } catch {
    return null; // gone
  }
}

/**
 * Starts sampling `rootPid` and its descendants every `intervalMs`; stop() → { rootMb, childrenMb,
 * firstChildAt } (epoch ms when a descendant was first seen, or null).
 */
export function sampleRss(rootPid, intervalMs = 50) {
  const peaks = new Map(); // pid -> kB
  const known = new Set([rootPid]);
  let firstChildAt = null;
  const tick = () => {
    const parentOf = new Map();
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      const pid = Number(name);
      const st = readStatus(pid);
      if (st) parentOf.set(pid, st);
    }
    // Descendants: repeat until no new pid joins (children may be listed before their parent).
    for (let grew = true; grew; ) {
      grew = false;
      for (const [pid, st] of parentOf) {
        if (!known.has(pid) && known.has(st.ppid)) {
          known.add(pid);
          firstChildAt ??= Date.now();
          grew = true;
        }
      }
    }
    for (const pid of known) {
      const st = parentOf.get(pid);
      if (st && Number.isFinite(st.hwmKb)) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, st.hwmKb));
    }
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      let children = 0;
      for (const [pid, kb] of peaks) if (pid !== rootPid) children += kb;
      return { rootMb: (peaks.get(rootPid) ?? NaN) / 1024, childrenMb: children / 1024, firstChildAt };
    },
  };
}
