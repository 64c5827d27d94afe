//! Building the book (feature `book`).
