// What of the addon stays in the memory of the process that loaded it (Linux): the loader's
// relocation table is read once, while the addon loads, and given back then.
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const linux = process.platform === "linux" && /64$/.test(process.arch) && process.report?.getReport?.().header.glibcVersionRuntime;

/** The file offset and size of each section of the ELF64 file `bytes`, by name. */
function sections(bytes) {
  const at = Number(bytes.readBigUInt64LE(0x28));
  const [size, count, names] = [bytes.readUInt16LE(0x3a), bytes.readUInt16LE(0x3c), bytes.readUInt16LE(0x3e)];
  const header = (i) => ({ name: bytes.readUInt32LE(at + i * size), offset: Number(bytes.readBigUInt64LE(at + i * size + 0x18)), size: Number(bytes.readBigUInt64LE(at + i * size + 0x20)) });
  const strings = header(names);
  const all = new Map();
  for (let i = 0; i < count; i++) {
    const { name, offset, size: length } = header(i);
    const start = strings.offset + name;
    all.set(bytes.toString("latin1", start, bytes.indexOf(0, start)), { offset, length });
  }
  return all;
}

/** Which of the pages at file offsets [from, to) of `file`'s mapping at offset 0 are in this process's memory. */
function presentPages(file, from, to) {
  const mapping = readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .map((line) => /^([0-9a-f]+)-[0-9a-f]+ \S+ ([0-9a-f]+) \S+ \S+\s+(.*)$/.exec(line))
    .find((m) => m && m[3] === file && Number.parseInt(m[2], 16) === 0);
  assert.ok(mapping, `${file} is mapped from its start`);
  const base = Number.parseInt(mapping[1], 16);
  const fd = openSync("/proc/self/pagemap", "r");
  try {
    const present = [];
    for (let page = Math.ceil(from / 4096); (page + 1) * 4096 <= to; page++) {
      const entry = Buffer.alloc(8);
      readSync(fd, entry, 0, 8, ((base + page * 4096) / 4096) * 8);
      if (entry.readBigUInt64LE(0) >> 63n) present.push(page * 4096);
    }
    return present;
  } finally {
    closeSync(fd);
  }
}

test("the loader's relocation table is given back once the addon has loaded", { skip: !linux && "64-bit Linux (glibc) only" }, () => {
  require("../index.js");
  const addon = readFileSync("/proc/self/maps", "utf8").match(/\s(\/\S+\.node)$/m)?.[1];
  assert.ok(addon, "the addon is loaded");
  const rela = sections(readFileSync(addon)).get(".rela.dyn");
  assert.ok(rela && rela.length > 2 * 4096, `${addon} has a relocation table of whole pages (${rela?.length} bytes)`);
  assert.deepEqual(presentPages(addon, rela.offset, rela.offset + rela.length), [], "no page of .rela.dyn is in memory");
});
