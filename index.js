// The package entry: the native addon, loaded by ./loader.js (which says where it looks).
// Hand-written on purpose: the addon is built with `napi build --platform --no-js` (the npm scripts
// do) so that napi does not replace this file with its generated loader.
const binding = require("./loader.js").load();

// Spelled out so that Node sees them as named exports of this CommonJS module in
// `import { McpAdapter } from "pi-mcp-native"` (the install test checks none is missing). Only
// the values index.d.ts declares: the string enums it declares as types (`ErrorCode`) stay inside.
module.exports.McpAdapter = binding.McpAdapter;
module.exports.configHash = binding.configHash;
