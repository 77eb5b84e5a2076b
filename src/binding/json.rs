//! JSON as JavaScript gets it. napi-rs writes `any` for `serde_json::Value`, which checks
//! nothing; under these names `types/header.d.ts` declares it as `unknown`, or, where the core
//! always makes an object (a JSON Schema, a result's structured content), as
//! `Record<string, unknown>`, and napi converts it as it does `Value`. What JavaScript gives is
//! taken as `Value` or `Map` (`any`, `Record<string, any>`: any value type-checks as an argument).

pub type JsonValue = serde_json::Value;
/// A JSON object (the core makes no other value where it is used).
pub type JsonObject = serde_json::Value;
/// The `mcp` tool's parameters as the model gave them: the core reads them (a wrong one gets its
/// error, not napi's), and `types/header.d.ts` declares them, checked against the tool's schema
/// by `__test__/contract.test.mjs`.
pub type McpParams = serde_json::Value;
