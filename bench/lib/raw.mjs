// The floor: crates/connection/examples/raw_rmcp.rs, a bare rmcp client, against the same server command.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./setup.mjs";

export const RAW_RMCP = join(ROOT, "target", "x86_64-unknown-linux-gnu", "release", "examples", "raw_rmcp");

/** Runs the raw client; `flags` e.g. { cold: 1 } or { warm: 100, burst: 1000, inflight: 50 }. */
export function rawRmcp(command, flags) {
  const args = Object.entries(flags).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const out = execFileSync(RAW_RMCP, [...args, "--", ...command], { encoding: "utf8", timeout: 120_000 });
  return JSON.parse(out);
}
