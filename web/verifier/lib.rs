//! The browser verifier's WebAssembly: the check of a published draw, built from the very
//! files of `src/domain/winners` (each imports only its siblings and a few crates), so the
//! page and `tally verify-draw` cannot disagree.
//!
//! The page calls `check` with one JSON document, `{"winners", "eligible", "draw",
//! "networks"}` (the answers' texts, the last two may be null), and reads back the report:
//! `{"passed", "steps": [{"id", "title", "outcome", "detail"}]}`. Memory crosses the
//! boundary as (pointer, length) pairs from `alloc`, freed with `dealloc`.

// These files also carry what only the service uses (the eligible set from cursors).
#![allow(dead_code)]

#[path = "../../src/domain/winners/beacon.rs"]
mod beacon;
#[path = "../../src/domain/winners/check.rs"]
mod check;
#[path = "../../src/domain/winners/eligible.rs"]
mod eligible;
#[path = "../../src/domain/winners/hex.rs"]
mod hex;
#[path = "../../src/domain/winners/instant.rs"]
mod instant;
#[path = "../../src/domain/winners/pick.rs"]
mod pick;
#[path = "../../src/domain/winners/public.rs"]
mod public;

use serde::Deserialize;

#[derive(Deserialize)]
struct Request {
    winners: String,
    eligible: String,
    draw: Option<String>,
    networks: Option<String>,
}

/// `len` bytes for the page to write into.
#[unsafe(no_mangle)]
pub extern "C" fn alloc(len: usize) -> *mut u8 {
    Box::into_raw(vec![0u8; len].into_boxed_slice()).cast()
}

/// Frees what `alloc` or `check` handed out.
///
/// # Safety
/// `pointer` and `len` must be a pair that `alloc` or `check` returned, freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dealloc(pointer: *mut u8, len: usize) {
    // SAFETY: the caller hands back a boxed slice of this length that this module made.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(pointer, len)) });
}

/// Checks the draw in the JSON request at `pointer`; returns the report's pointer in the
/// high 32 bits and its length in the low ones.
///
/// # Safety
/// `pointer` must point to `len` bytes written by the page into a buffer from `alloc`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn check(pointer: *const u8, len: usize) -> u64 {
    // SAFETY: the page wrote `len` bytes at `pointer`, in a buffer this module allocated.
    let input = unsafe { std::slice::from_raw_parts(pointer, len) };
    let report = match serde_json::from_slice::<Request>(input) {
        Ok(request) => run(&request),
        Err(e) => serde_json::json!({"passed": false, "steps": [{"id": "format",
            "title": "The files are a Tally draw's answers", "outcome": "fail",
            "detail": e.to_string()}]}),
    };
    let bytes = report.to_string().into_bytes().into_boxed_slice();
    let out_len = bytes.len();
    let out: *mut u8 = Box::into_raw(bytes).cast();
    ((out as u64) << 32) | out_len as u64
}

fn run(request: &Request) -> serde_json::Value {
    let trusted = match beacon::BeaconNetworks::with_json(request.networks.as_deref()) {
        Ok(trusted) => trusted,
        Err(e) => {
            return serde_json::json!({"passed": false, "steps": [{"id": "network",
                "title": "The networks you trust are well formed", "outcome": "fail",
                "detail": e.to_string()}]});
        }
    };
    let report = public::check_answers(
        &request.winners,
        &request.eligible,
        request.draw.as_deref(),
        &trusted,
    );
    serde_json::json!({"passed": report.passed(), "steps": report.steps})
}
