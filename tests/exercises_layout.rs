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

/// The book's numbered chapters as mdBook numbers them in the sidebar: every top-level list item
/// of `book/src/SUMMARY.md` (`- [Title](stem.md)`), counted on across the part headings; the
/// links before the first list item (Preface, Introduction) are unnumbered. Returns
/// `(number, title, stem)`.
fn sidebar() -> Vec<(usize, String, String)> {
    let summary = read(&root().join("book/src/SUMMARY.md"));
    let mut out = Vec::new();
    for line in summary.lines() {
        let Some(item) = line.strip_prefix("- [") else { continue };
        let (title, rest) = item.split_once("](").expect("a SUMMARY link");
        let stem = rest.split_once(".md)").expect("a link to a .md file").0;
        out.push((out.len() + 1, title.to_string(), stem.to_string()));
    }
    out
}

/// `chNN` of chapter `n`.
fn ch(n: usize) -> String {
    format!("ch{n:02}")
}

/// The rows of the chapter map in `text` (the table whose header starts with `| # |`; `prefix` is
/// stripped from every line first, `//! ` in `src/lib.rs`): for each row with a number, the
/// number, the chapter cell, the examples (`chNN_...` in backticks) and the exercise modules
/// (`exercises/chNN`) it names.
fn chapter_map(text: &str, prefix: &str, what: &str) -> Vec<(usize, String, Vec<String>, Vec<String>)> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_prefix(prefix).unwrap_or(l))
        .skip_while(|l| !l.starts_with("| # |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(lines.len() >= 17, "{what}: no chapter map with a `| # |` column");
    let mut rows = Vec::new();
    for l in lines {
        let cells: Vec<&str> = l.split('|').map(str::trim).collect();
        if cells[1].is_empty() {
            continue;
        }
        let n: usize = cells[1]
            .parse()
            .unwrap_or_else(|_| panic!("{what}: {:?} is not a chapter number", cells[1]));
        let mut examples = Vec::new();
        let mut modules = Vec::new();
        for tick in l.split('`').skip(1).step_by(2) {
            let is_ch = |s: &str| s.len() >= 4 && s.starts_with("ch") && s[2..4].bytes().all(|b| b.is_ascii_digit());
            if let Some(m) = tick.strip_prefix("exercises/") {
                if is_ch(m) {
                    modules.push(m.to_string());
                }
            } else if is_ch(tick) && tick.len() > 5 && tick.as_bytes()[4] == b'_' {
                examples.push(tick.to_string());
            }
        }
        rows.push((n, cells[2].to_string(), examples, modules));
    }
    rows
}

/// Issue 15: one numbering. The sidebar's chapter numbers name the examples
/// (`examples/chNN_<stem>.rs`), the exercise modules (`exercises/src/chNN.rs`, graded by the
/// chapter `NN`'s Exercises section) and the first column of the chapter map, which is the same
/// in `README.md`, `src/lib.rs` and the Introduction.
#[test]
fn examples_exercises_and_maps_use_the_sidebar_numbers() {
    let side = sidebar();
    assert!(side.len() >= 17, "SUMMARY.md: {side:?}");
    let by_number = |n: usize| {
        side.iter()
            .find(|c| c.0 == n)
            .unwrap_or_else(|| panic!("the sidebar has no chapter {n}"))
    };
    // examples: chNN_<stem of chapter NN>, and every one is a chapter's
    let mut examples = Vec::new();
    for e in fs::read_dir(root().join("examples")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".rs") else { continue };
        let n: usize = stem
            .strip_prefix("ch")
            .and_then(|s| s.get(..2))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("examples/{name}: an example is named chNN_<chapter file stem>"));
        let chapter = by_number(n);
        let want = format!("{}_{}", ch(n), chapter.2);
        assert_eq!(stem, want, "examples/{name}: chapter {n} is {}.md", chapter.2);
        examples.push(stem.to_string());
    }
    // exercise modules: chNN, graded by chapter NN's Exercises section
    for name in chapters() {
        let n: usize = name
            .strip_prefix("ch")
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("exercise module {name:?}: modules are named chNN"));
        let chapter = by_number(n);
        let text = read(&root().join(format!("book/src/{}.md", chapter.2)));
        let command = format!("cargo test -p exercises --test {name}");
        assert!(
            text.contains(&command),
            "exercise module {name}: chapter {n} ({}.md) does not name `{command}`",
            chapter.2
        );
    }
    // the three maps: numbers agree with the sidebar and the names, and the maps agree
    let maps = [
        ("README.md", ""),
        ("src/lib.rs", "//! "),
        ("book/src/introduction.md", ""),
    ]
    .map(|(file, prefix)| {
        let rows = chapter_map(&read(&root().join(file)), prefix, file);
        for (n, cell, exs, mods) in &rows {
            let chapter = by_number(*n);
            assert!(
                cell.contains(&chapter.1),
                "{file}: row {n} is {cell:?}, but the sidebar's chapter {n} is {:?}",
                chapter.1
            );
            for e in exs {
                assert!(
                    e.starts_with(&format!("{}_", ch(*n))),
                    "{file}: row {n} names example {e}"
                );
                assert!(examples.contains(e), "{file}: row {n}: there is no examples/{e}.rs");
            }
            for m in mods {
                assert_eq!(m, &ch(*n), "{file}: row {n} names exercises/{m}");
            }
        }
        let key: Vec<(usize, Vec<String>, Vec<String>)> = rows.into_iter().map(|(n, _, e, m)| (n, e, m)).collect();
        (file, key)
    });
    for (file, key) in &maps[1..] {
        assert_eq!(
            key, &maps[0].1,
            "the chapter maps of {file} and README.md differ (numbers, examples or exercise modules)"
        );
    }
    // every chapter example appears in the maps
    for e in &examples {
        assert!(
            maps[0].1.iter().any(|(_, exs, _)| exs.contains(e)),
            "examples/{e}.rs is in no row of the chapter map"
        );
    }
}
