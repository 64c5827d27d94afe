//! A global allocator that counts the calls obtaining memory, shared by the allocation tests
//! (`forward_alloc`, `step_alloc`, `collision_alloc`). A test binary includes it with
//! `#[path = "common/counting.rs"] mod counting;` and calls [`count`].
//!
//! The count is per thread: the test harness's main thread, waiting for the test to finish,
//! sometimes allocates while the test runs (a waker in its channel's `recv`, when it stops
//! spinning and blocks), and those allocations are not the code under test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the calls that obtain memory on each thread.
struct Counting;

thread_local! {
    /// Allocations made by this thread so far (const-initialized, no destructor: reading it
    /// never allocates).
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: a thread being torn down may still allocate
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is passed on unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on the calling thread.
pub fn count(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}
