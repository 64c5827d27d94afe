//! The graded exercises are wired together: every chapter listed in `exercises/src/lib.rs`'s
//! `CHAPTERS` has its stub file, its worked answers, its grader declared as a `harness = false`
//! test, a module line that swaps in the answers under `--features solutions`, a book chapter
//! whose "Exercises" section names its grader command, and a row in the instructor appendix; every
//! book chapter with an "Exercises" section names a grader of the crate (there is no other place
//! for exercises: no `tests/exercises_*.rs` beside this file); and every grader that carries
//! wrong-answer tests is included in `exercises/tests/wrong_answers.rs`, which runs them.
//! (Whether the answers pass and the stubs fail is checked by `.ci/run`, which builds the
//! exercises crate.)

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The names in `pub const CHAPTERS: [&str; N] = [...]`.
fn chapters() -> Vec<String> {
    let lib = read(&root().join("exercises/src/lib.rs"));
    let start = lib
        .find("pub const CHAPTERS")
        .expect("CHAPTERS in exercises/src/lib.rs");
    let open = start + lib[start..].find("= [").expect("a list") + 3;
    let close = open + lib[open..].find("];").expect("the end of the list");
    lib[open..close]
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn every_chapter_of_the_exercises_crate_is_complete() {
    let ex = root().join("exercises");
    let lib = read(&ex.join("src/lib.rs"));
    let manifest = read(&ex.join("Cargo.toml"));
    let instructor = read(&root().join("book/src/instructor.md"));
    let book: Vec<(PathBuf, String)> = fs::read_dir(root().join("book/src"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            let t = read(&p);
            (p, t)
        })
        .collect();
    let names = chapters();
    assert!(names.len() >= 10, "CHAPTERS: {names:?}");
    for name in &names {
        for file in [
            format!("src/{name}.rs"),
            format!("solutions/{name}.rs"),
            format!("tests/{name}.rs"),
        ] {
            assert!(ex.join(&file).is_file(), "exercises/{file} is missing");
        }
        let stub = read(&ex.join(format!("src/{name}.rs")));
        assert!(stub.contains("todo!()"), "exercises/src/{name}.rs has no stub left");
        assert!(
            !read(&ex.join(format!("solutions/{name}.rs"))).contains("todo!()"),
            "exercises/solutions/{name}.rs still holds a todo!()"
        );
        let swap = format!("#[cfg_attr(feature = \"solutions\", path = \"../solutions/{name}.rs\")]\npub mod {name};");
        assert!(lib.contains(&swap), "exercises/src/lib.rs lacks:\n{swap}");
        let test = format!("[[test]]\nname = \"{name}\"\nharness = false");
        assert!(manifest.contains(&test), "exercises/Cargo.toml lacks:\n{test}");
        let command = format!("cargo test -p exercises --test {name}");
        assert!(
            book.iter()
                .any(|(p, t)| !p.ends_with("instructor.md") && t.contains(&command)),
            "no book chapter tells students to run `{command}`"
        );
        assert!(
            instructor.contains(&command),
            "book/src/instructor.md has no row for {name}"
        );
    }
    // and the other way round: a chapter's Exercises section names a grader that exists
    for (p, t) in &book {
        let Some(at) = t.find("\n## Exercises") else { continue };
        let section = &t[at..];
        let i = section
            .find("cargo test -p exercises --test ")
            .unwrap_or_else(|| panic!("{}: its Exercises section names no grader", p.display()));
        let name: String = section[i + "cargo test -p exercises --test ".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        assert!(
            names.contains(&name),
            "{}: grader {name:?} is not in CHAPTERS",
            p.display()
        );
        let stub = format!("exercises/src/{name}.rs");
        assert!(
            section.contains(&stub),
            "{}: its Exercises section should name the stub file {stub}",
            p.display()
        );
    }
    // exercises live in the crate only
    for e in fs::read_dir(root().join("tests")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            !name.starts_with("exercises_") || name == "exercises_layout.rs",
            "tests/{name}: exercises belong in the exercises crate (book/src/instructor.md, \"Adding an exercise\")"
        );
    }
    // the graders' wrong-answer tests are run
    let wrong = read(&ex.join("tests/wrong_answers.rs"));
    for name in &names {
        if read(&ex.join(format!("tests/{name}.rs"))).contains("mod wrong_answers") {
            let include = format!("#[path = \"{name}.rs\"]\nmod {name};");
            assert!(
                wrong.contains(&include),
                "exercises/tests/wrong_answers.rs lacks:\n{include}"
            );
        }
    }
}
