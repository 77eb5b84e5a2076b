// The package entry: the native addon, loaded by ./loader.js (which says where it looks).
// Hand-written on purpose: build with `napi build --platform --no-js` (the npm scripts do) so napi
// does not overwrite this file with its generated loader.
module.exports = require("./loader.js").load();
