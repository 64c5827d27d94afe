//! The library side of the `mbd` command (`src/main.rs` only parses arguments):
//!
//! | command | module |
//! |---|---|
//! | state files (`--state STATE.json`) | [`state`] |
//! | `mbd inspect` | [`inspect`] |
//! | `mbd simulate` | [`simulate`] |
//!
//! Every failure is a typed [`Error`](crate::Error) that the command prints as one line.

pub mod inspect;
pub mod simulate;
pub mod state;

/// Makes an error message one line: line breaks and other control characters (which a model
/// file's attribute or a parser message may carry) are shown escaped.
pub fn one_line(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
