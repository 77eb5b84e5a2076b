//! The addon's relocation table given back to the system once the loader has read it. The table
//! (RELA, 0.41 MB in the published addon: an entry per pointer in its static tables and vtables)
//! is read once, while the loader loads the addon, and never again: every symbol is bound then
//! (`-z now`). Its pages would stay in Pi's memory for as long as Pi runs. Where the target's
//! glibc is 2.36 or later build.rs packs the table (DT_RELR) to a few KB; the published addon is
//! built for glibc 2.17, where it cannot. They are pages of a read-only file mapping, never
//! written: should anything read them again, the kernel reads them from the file.

use std::ffi::{c_int, c_void};

/// dynamic section tags (elf.h)
const DT_NULL: i64 = 0;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;

/// Runs as the addon loads (a static constructor, after the loader's relocations).
#[napi_derive::module_init]
fn release_relocation_table() {
    let own_code = release_relocation_table as *const () as usize;
    // SAFETY: `visit` reads only what glibc hands it for the call, and `data` is the address
    // given here, not dereferenced.
    unsafe { libc::dl_iterate_phdr(Some(visit), own_code as *mut c_void) };
}

/// For each loaded object: stops at the addon (the one whose segments hold `data`, an address
/// of its code) and releases its table.
unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
    // SAFETY: glibc passes an object's description valid for the call, with `dlpi_phnum`
    // program headers at `dlpi_phdr`.
    let (base, headers) = unsafe {
        let info = &*info;
        let headers = std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum));
        (info.dlpi_addr as usize, headers)
    };
    let segment = |header: &libc::Elf64_Phdr| {
        let start = base + header.p_vaddr as usize;
        start..start + header.p_memsz as usize
    };
    let loaded = |header: &&libc::Elf64_Phdr| header.p_type == libc::PT_LOAD;
    if !headers
        .iter()
        .filter(loaded)
        .any(|h| segment(h).contains(&(data as usize)))
    {
        return 0;
    }
    let Some(dynamic) = headers.iter().find(|h| h.p_type == libc::PT_DYNAMIC) else {
        return 1;
    };
    // SAFETY: the addon's own dynamic section, mapped and ended by DT_NULL.
    let Some(table) = (unsafe { relocation_table(base + dynamic.p_vaddr as usize) }) else {
        return 1;
    };
    // glibc rewrites the section's addresses as loaded ones on most targets, not on all.
    let start = if table.start < base {
        table.start + base
    } else {
        table.start
    };
    let table = start..start + table.len();
    let read_only = headers.iter().filter(loaded).any(|h| {
        h.p_flags & libc::PF_W == 0
            && segment(h).start <= table.start
            && table.end <= segment(h).end
    });
    if read_only {
        release_pages(table);
    }
    1
}

/// DT_RELA..+DT_RELASZ of the dynamic section at `dynamic`, as written there.
///
/// # Safety
/// `dynamic` is a mapped dynamic section, an array of (tag, value) pairs ended by DT_NULL.
unsafe fn relocation_table(dynamic: usize) -> Option<std::ops::Range<usize>> {
    let (mut start, mut size) = (None, None);
    let mut entry = dynamic as *const [u64; 2];
    loop {
        // SAFETY: within the section, which the caller vouches ends with DT_NULL.
        let [tag, value] = unsafe { entry.read() };
        match tag as i64 {
            DT_NULL => break,
            DT_RELA => start = Some(value as usize),
            DT_RELASZ => size = Some(value as usize),
            _ => {}
        }
        // SAFETY: the next entry; DT_NULL has not been seen yet.
        entry = unsafe { entry.add(1) };
    }
    Some(start?..start? + size?)
}

/// Unmaps the whole pages inside `range` from the process (they stay in the page cache).
fn release_pages(range: std::ops::Range<usize>) {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let start = range.start.next_multiple_of(page);
    let end = range.end / page * page;
    if end > start {
        // SAFETY: whole pages of the addon's read-only file mapping that nothing reads after
        // the loader; MADV_DONTNEED on such pages only drops them from the page tables.
        unsafe { libc::madvise(start as *mut c_void, end - start, libc::MADV_DONTNEED) };
    }
}
