//! napi's build step, the index of the WordNet table, the order of the addon's code and its
//! packed relocations.

fn main() {
    napi_build::setup();
    wordnet_prefixes();
    if own_lld_release() {
        link_order();
        packed_relocations();
    }
}

/// Where the lines of each two-byte key prefix start in src/search/wordnet.txt (a key of one
/// byte pads with 0), as a Rust array: a lookup then reads the few pages of its prefix's lines
/// instead of probing the whole table (every page a process touches stays in its memory).
fn wordnet_prefixes() {
    println!("cargo:rerun-if-changed=src/search/wordnet.txt");
    let text = std::fs::read("src/search/wordnet.txt").expect("src/search/wordnet.txt is readable");
    let mut entries = String::new();
    let (mut last, mut at) = (None, 0);
    for line in text.split(|&b| b == b'\n') {
        let key = line.split(|&b| b == b'|').next().unwrap_or_default();
        let prefix = [
            key.first().copied().unwrap_or(0),
            key.get(1).copied().unwrap_or(0),
        ];
        if !line.is_empty() && last != Some(prefix) {
            entries.push_str(&format!("({prefix:?}, {at}),"));
            last = Some(prefix);
        }
        at += line.len() + 1;
    }
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("wordnet_prefixes.rs");
    std::fs::write(out, format!("&[{entries}]")).expect("OUT_DIR is writable");
}

/// A release build for x86_64 Linux (GNU) linked by Rust's own lld (Rust ≥ 1.90, no other
/// linker configured): the linker here that takes the options below.
fn own_lld_release() -> bool {
    const LINKER: &str = "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER";
    println!("cargo:rerun-if-env-changed={LINKER}");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("PROFILE") == "release"
        && std::env::var_os(LINKER).is_none()
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("linker")
        && rustc_minor() >= 90
}

/// The functions a session runs placed together at the start of the addon's code (see
/// scripts/link-order.mjs, which writes link-order.txt): Linux maps a library's code 64 KiB or
/// more around each page first touched, so scattered code keeps most of the library in Pi's
/// memory.
fn link_order() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=PI_MCP_NATIVE_LINK_MAP");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let file = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("link-order.txt");
    if file.is_file() {
        println!(
            "cargo:rustc-cdylib-link-arg=-Wl,--symbol-ordering-file={}",
            file.display()
        );
        println!("cargo:rustc-cdylib-link-arg=-Wl,--no-warn-symbol-ordering");
    }
    // scripts/link-order.mjs reads where each function landed from the linker's map (with the
    // symbols' names as the list gives them).
    if let Ok(map) = std::env::var("PI_MCP_NATIVE_LINK_MAP") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-Map={map}");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--no-demangle");
    }
}

/// The addon's ~22,000 relative relocations (pointers in vtables and static tables) packed as
/// DT_RELR bitmaps, a few KB, instead of 530 KB of RELA entries that the loader reads whole,
/// in Pi's memory for as long as it runs. glibc loads such a library from 2.36 on; a build from
/// source runs where it was built, so the build's own glibc decides.
fn packed_relocations() {
    let glibc = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|v| {
            let (major, minor) = v.trim().strip_prefix("glibc ")?.split_once('.')?;
            Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?))
        });
    if glibc.is_some_and(|version| version >= (2, 36)) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,pack-relative-relocs");
    }
}

/// The minor version of the compiler building this crate (0 when it cannot be told).
fn rustc_minor() -> u32 {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|v| v.split(['.', ' ']).nth(2).and_then(|m| m.parse().ok()))
        .unwrap_or(0)
}
