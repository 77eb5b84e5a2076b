//! The broker runs for hours and serves floods it then drops (see `hop`): what a connection held
//! must go back to the system once it is gone, not stay with the allocator. Measured with
//! `bench/broker-flood.mjs` (glibc, debug build): without these, a client that had left 64 MiB of
//! answers unread left the broker 78–101 MiB bigger once it was gone, and a second 16 MiB
//! message 16 MiB bigger.

/// glibc raises its threshold for mapping an allocation of its own to the size of the largest
/// mapped one freed (up to 32 MiB), so after one big message the next big buffers come from the
/// threads' arenas, whose tops `malloc_trim` does not give back. A fixed threshold (glibc's
/// default, 128 KiB) keeps every big buffer mapped, and unmapped when freed.
pub fn keep_big_allocations_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt(3) with a documented parameter, before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Gives back the whole free pages the allocator keeps: after a flood of requests (each a task,
/// its message and its answer, spread over the runtime's threads) its arenas hold much freed
/// memory.
pub fn release() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) has no preconditions; it only returns free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}
