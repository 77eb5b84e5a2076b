//! napi's build step, the order of the addon's code, identical code folded and packed
//! relocations.

fn main() {
    napi_build::setup();
    if let Some(linker) = lld_release() {
        link_order();
        // Functions whose code is the same, kept once: the same generic code instantiated in
        // several of the workspace's crates, 0.14 MB. `all`: `safe` folds nothing, as rustc
        // writes no address-significance table, and Rust does not promise distinct functions
        // distinct addresses.
        println!("cargo:rustc-cdylib-link-arg=-Wl,--icf=all");
        packed_relocations(&linker);
    }
}

/// A release build for x86_64 Linux (GNU) linked by Rust's own lld (Rust ≥ 1.90), the linker here
/// that takes the options below; the C compiler that drives the link is returned. rustc's default
/// links with lld through `cc`; a gcc the build names instead (the release workflow's
/// `napi build --use-napi-cross` names its glibc 2.17 cross gcc, too old for `-fuse-ld=lld`) is
/// given a directory whose `ld` is Rust's lld, which gcc then runs. Any other linker is the user's
/// choice, and left alone.
fn lld_release() -> Option<String> {
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("TARGET") != "x86_64-unknown-linux-gnu"
        || var("PROFILE") != "release"
        || var("CARGO_ENCODED_RUSTFLAGS").contains("linker")
        || rustc_minor() < 90
    {
        return None;
    }
    let Ok(gcc) = std::env::var("RUSTC_LINKER") else {
        return Some("cc".into());
    };
    if !gcc.ends_with("gcc") {
        return None;
    }
    let rust_lld = std::path::Path::new(&rustc_output("--print=sysroot")?)
        .join("lib/rustlib")
        .join(var("HOST"))
        .join("bin/rust-lld");
    let dir = std::path::Path::new(&var("OUT_DIR")).join("lld");
    let ld = dir.join("ld");
    let _ = std::fs::remove_file(&ld);
    #[cfg(unix)]
    let linked = rust_lld.is_file()
        && std::fs::create_dir_all(&dir).is_ok()
        && std::os::unix::fs::symlink(&rust_lld, &ld).is_ok();
    #[cfg(not(unix))]
    let linked = false;
    linked.then(|| {
        println!("cargo:rustc-cdylib-link-arg=-B{}", dir.display());
        gcc
    })
}

/// Code every load runs that no name of the list can place: the static constructors (`ctor`'s,
/// napi's registrations among them: one `.text.startup` section), the C runtime's start and end
/// pieces and glibc's `stat` wrappers (whole objects' `.text`).
const LOAD_TIME_CODE: &str =
    "    *(.text.startup)\n    *crtbeginS.o(.text) *crtendS.o(.text) *libc_nonshared.a:*(.text)\n";

/// The functions a session runs placed together before the rest of the addon's code (see
/// scripts/link-order.mjs, which writes link-order.txt): Linux maps a library's code 64 KiB or
/// more around each page first touched, so scattered code keeps most of the library in Pi's
/// memory. The list gives each function's symbol as a pattern without the hashes Rust puts in it,
/// which change with every dependency or compiler update; a linker script places the sections
/// they match (`.text.<symbol>`, or `.text.unlikely.<symbol>` for the code LLVM deems cold and
/// `.text.startup.<symbol>` for the static constructors) at the start of `.text`, where lld then
/// adds the rest of the code. One `.text`, not an output section of their own: tools that take
/// `.text` for a library's code (valgrind's callgrind, which scripts/link-order.mjs runs) would
/// not see the session's code at all.
fn link_order() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=PI_MCP_NATIVE_LINK_MAP");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let list = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("link-order.txt");
    if let Ok(list) = std::fs::read_to_string(list) {
        let patterns: String = list
            .lines()
            .filter(|name| !name.is_empty())
            .map(|p| format!("    *(.text.{p} .text.unlikely.{p} .text.startup.{p})\n"))
            .collect();
        let script = std::path::Path::new(&var("OUT_DIR")).join("link-order.ld");
        // After `.fini` (crtn.o's, in every glibc link), where lld puts `.text` anyway: it will not
        // insert `.text` before itself.
        let text = format!(
            "SECTIONS {{\n  .plt : {{ *(.plt) }}\n  .text : {{\n{patterns}{LOAD_TIME_CODE}  }}\n}}\nINSERT AFTER .fini;\n"
        );
        std::fs::write(&script, text).expect("OUT_DIR is writable");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-T,{}", script.display());
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
/// in Pi's memory for as long as it runs. glibc loads such a library from 2.36 on, so only where
/// the target's glibc (the one `gcc` links against: the build machine's, or 2.17 in the release
/// workflow's cross toolchain, so that the published addon loads on old distributions) is 2.36
/// or later.
fn packed_relocations(gcc: &str) {
    let defines = std::process::Command::new(gcc)
        .args([
            "-dM",
            "-E",
            "-include",
            "features.h",
            "-x",
            "c",
            "/dev/null",
        ])
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .unwrap_or_default();
    let define = |name: &str| {
        defines.lines().find_map(|line| {
            let value = line.strip_prefix("#define ")?.strip_prefix(name)?;
            value.strip_prefix(' ')?.trim().parse::<u32>().ok()
        })
    };
    let glibc = define("__GLIBC__").zip(define("__GLIBC_MINOR__"));
    if glibc.is_some_and(|version| version >= (2, 36)) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,pack-relative-relocs");
    }
}

/// The minor version of the compiler building this crate (0 when it cannot be told).
fn rustc_minor() -> u32 {
    rustc_output("--version")
        .and_then(|v| v.split(['.', ' ']).nth(2).and_then(|m| m.parse().ok()))
        .unwrap_or(0)
}

/// What the compiler building this crate prints for `arg`, trimmed.
fn rustc_output(arg: &str) -> Option<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc).arg(arg).output().ok()?;
    String::from_utf8(out.stdout)
        .ok()
        .map(|text| text.trim().to_string())
}
