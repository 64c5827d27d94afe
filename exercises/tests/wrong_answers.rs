//! The graders' own tests: every grader keeps, in a `wrong_answers` module at its bottom, tests
//! that feed its checks deliberately wrong implementations (a sign error, a transposed matrix, a
//! missing term) and expect them to fail, most with a message naming what is wrong. A grader is
//! a `harness = false` program, so its tests cannot run in it; this ordinary test target
//! includes each grader as a module and runs them: `cargo test -p exercises --test
//! wrong_answers`. (That every worked answer passes and every stub is "not attempted" is checked
//! by `.ci/run`.)

#![allow(dead_code)]

#[path = "ch01.rs"]
mod ch01;
#[path = "ch02.rs"]
mod ch02;
#[path = "ch03.rs"]
mod ch03;
#[path = "ch04.rs"]
mod ch04;
#[path = "ch05.rs"]
mod ch05;
#[path = "ch06.rs"]
mod ch06;
#[path = "ch07.rs"]
mod ch07;
#[path = "ch08.rs"]
mod ch08;
#[path = "ch09.rs"]
mod ch09;
#[path = "ch10.rs"]
mod ch10;
#[path = "ch11.rs"]
mod ch11;
#[path = "ch12.rs"]
mod ch12;
#[path = "ch13.rs"]
mod ch13;
#[path = "ch14.rs"]
mod ch14;
#[path = "ch15.rs"]
mod ch15;
#[path = "ch16.rs"]
mod ch16;
#[path = "ch17.rs"]
mod ch17;
#[path = "ch18.rs"]
mod ch18;
