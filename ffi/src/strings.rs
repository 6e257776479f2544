//! Strings the library hands its caller, freed with `sitefile_string_free`: NUL-terminated, each
//! with its buffer's capacity and its length kept in the bytes just before it, so freeing one
//! never scans it and `sitefile_string_len` answers at once. A page runs to tens of KB, and
//! `strlen` over it, to free it and again to read it, cost a tenth of a warm page's time
//! through the C API (`benches/benches/ffi.rs`). Steps and serialised values are written
//! straight into the buffer handed out; only text that already exists (a revision) is copied
//! into one.

use crate::status::{Failure, Outcome};
use sitefile_core::ErrorCode;
use std::ffi::c_char;
use std::mem::ManuallyDrop;

/// Bytes of one number kept before a string's text.
const WORD: usize = size_of::<usize>();

/// Bytes before a string's text: its buffer's capacity, then the text's length.
const HEADER: usize = 2 * WORD;

/// A string of the text `write` appends to the buffer it is given (which starts with room for
/// `capacity` bytes of text). The text must hold no NUL byte: JSON as serde and sonic-rs write
/// it never does (U+0000 inside a string is written `\u0000`).
pub(crate) fn written(capacity: usize, write: impl FnOnce(&mut Vec<u8>)) -> *mut c_char {
    let mut buffer = Vec::with_capacity(HEADER + capacity + 1);
    buffer.resize(HEADER, 0);
    write(&mut buffer);
    debug_assert!(!buffer[HEADER..].contains(&0), "the text holds no NUL byte");
    let len = buffer.len() - HEADER;
    buffer.push(0);
    // The caller may keep the string: it holds no more than its text (a step's buffer starts
    // with room for a large page; shrinking it is a reallocation in place).
    buffer.shrink_to_fit();
    let capacity = buffer.capacity();
    buffer[..WORD].copy_from_slice(&capacity.to_ne_bytes());
    buffer[WORD..HEADER].copy_from_slice(&len.to_ne_bytes());
    let mut buffer = ManuallyDrop::new(buffer);
    // SAFETY: the buffer holds more than HEADER bytes, so the text starts inside it.
    unsafe { buffer.as_mut_ptr().add(HEADER) }.cast()
}

/// Any text as a string; a NUL byte in it is refused.
pub(crate) fn owned_string(text: &[u8]) -> Outcome<*mut c_char> {
    if let Some(at) = text.iter().position(|&b| b == 0) {
        return Err(Failure::code(
            ErrorCode::InvalidContent,
            format!("a NUL byte in a result, at byte {at}"),
        ));
    }
    Ok(written(text.len(), |buffer| buffer.extend_from_slice(text)))
}

/// A value as a JSON string.
pub(crate) fn json_string<T: serde::Serialize + ?Sized>(value: &T) -> Outcome<*mut c_char> {
    let mut failed = None;
    let string = written(256, |buffer| {
        if let Err(e) = serde_json::to_writer(&mut *buffer, value) {
            failed = Some(e);
        }
    });
    match failed {
        None => Ok(string),
        Some(e) => {
            // SAFETY: made just above and not handed out.
            unsafe { free(string) };
            Err(Failure::code(ErrorCode::InvalidContent, e))
        }
    }
}

/// The length of a string made here, in bytes before its NUL.
///
/// # Safety
/// `s` is a string made by [`written`] and not freed since.
pub(crate) unsafe fn len(s: *const c_char) -> usize {
    // SAFETY: `written` put the text's length WORD bytes before the text.
    usize::from_ne_bytes(unsafe { s.cast::<u8>().sub(WORD).cast::<[u8; WORD]>().read() })
}

/// Frees a string made here.
///
/// # Safety
/// `s` is a string made by [`written`] and not freed since.
pub(crate) unsafe fn free(s: *mut c_char) {
    // SAFETY: `written` put the buffer's capacity HEADER bytes before the text.
    let start = unsafe { s.cast::<u8>().sub(HEADER) };
    // SAFETY: those bytes are the buffer's own, written by `written`.
    let capacity = usize::from_ne_bytes(unsafe { start.cast::<[u8; WORD]>().read() });
    // SAFETY: `start` and `capacity` are the buffer's, as `written` left it; no element needs
    // dropping, so a length of 0 frees it as it was allocated.
    drop(unsafe { Vec::from_raw_parts(start, 0, capacity) });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn strings_read_as_their_text_and_free_without_a_scan() {
        for text in ["", "revision", &"x".repeat(100_000)] {
            let s = owned_string(text.as_bytes()).unwrap();
            // SAFETY: a string just made, NUL-terminated.
            assert_eq!(unsafe { CStr::from_ptr(s) }.to_str().unwrap(), text);
            // SAFETY: as above.
            assert_eq!(unsafe { len(s) }, text.len());
            // SAFETY: made above, freed once.
            unsafe { free(s) };
        }
        assert!(owned_string(b"a\0b").is_err());
        let json = json_string(&serde_json::json!({"a": [1, "\u{0}"]})).unwrap();
        assert_eq!(
            // SAFETY: as above.
            unsafe { CStr::from_ptr(json) }.to_str().unwrap(),
            r#"{"a":[1,"\u0000"]}"#
        );
        // SAFETY: as above.
        unsafe { free(json) };
    }
}
