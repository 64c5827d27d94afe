//! The book build (`mbd book`): the real book builds cleanly, and each kind of mistake a chapter
//! can make is caught with a message naming the chapter file.
#![cfg(feature = "book")]

use mbd::book::{build, build_with_figures};
use std::fs;
use std::path::{Path, PathBuf};

/// A fresh, empty directory for one test under cargo's per-target temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("book_tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

const SVG: &str =
    r#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>"#;

/// Rust source with an anchor, a dollar sign and a `{` so that mangling by KaTeX would show.
const CODE: &str = "// ANCHOR: price\nfn price() -> &'static str { \"$5 and $6\" }\n// ANCHOR_END: price\n";

/// A small book: `chapter.md` (whose text is `body`) and `other.md`, a source file `code.rs` for
/// includes and one figure `src/figures/f.svg`. Returns (book dir, figure list).
fn small_book(name: &str, body: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = scratch(name);
    let src = dir.join("src");
    fs::create_dir_all(src.join("figures")).unwrap();
    fs::write(
        dir.join("book.toml"),
        "[book]\ntitle = \"test\"\n\n[preprocessor.katex]\nafter = [\"links\"]\n",
    )
    .unwrap();
    fs::write(
        src.join("SUMMARY.md"),
        "# Summary\n\n- [Chapter](chapter.md)\n- [Other](other.md)\n",
    )
    .unwrap();
    fs::write(src.join("chapter.md"), body).unwrap();
    fs::write(src.join("other.md"), "# Other\n\n## A section\n\nText.\n").unwrap();
    fs::write(dir.join("code.rs"), CODE).unwrap();
    let fig = src.join("figures").join("f.svg");
    fs::write(&fig, SVG).unwrap();
    (dir, vec![fig])
}

/// A chapter that uses everything correctly.
const GOOD: &str = r#"# Chapter

Inline math $\dot q = S(q)\,v$ and display math:

$$
H(q)\,\ddot q + C(q, \dot q) = \tau
$$

```rust
{{#include ../code.rs:price}}
```

Markdown must not reach into math: $f^*$ and $g^*$, $x_{i}$ and $y_{j}$, $[a](b)$, $`c`$.

| quantity | value |
|---|---|
| norm | $\|a_1\| + |b_2|$ |

See [the other chapter](other.md), [its section](other.md#a-section) and [the top](#chapter).

![a figure](figures/f.svg)
"#;

fn build_error(name: &str, body: &str) -> String {
    let (dir, figs) = small_book(name, body);
    let out = dir.join("out");
    match build_with_figures(&dir, Some(&out), &figs) {
        Ok(r) => panic!("{name}: expected the build to fail, it wrote {}", r.index.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_correct_small_book_builds_with_offline_math_and_intact_code() {
    let (dir, figs) = small_book("good", GOOD);
    let out = dir.join("out");
    let report = build_with_figures(&dir, Some(&out), &figs).unwrap();
    assert_eq!(
        report.chapters,
        vec![PathBuf::from("chapter.md"), PathBuf::from("other.md")]
    );
    assert!(report.links_checked >= 4, "{}", report.links_checked);
    let html = fs::read_to_string(out.join("chapter.html")).unwrap();
    // KaTeX produced MathML (inline and display) and no CDN stylesheet.
    assert!(html.contains("<math"), "no MathML in the page");
    assert!(
        html.contains("display=\"block\""),
        "display math not rendered as a block"
    );
    assert!(!html.contains("cdn.jsdelivr") && !html.contains("katex.min.css"));
    assert!(!html.contains("$$"), "display math left unrendered");
    // Characters Markdown would interpret inside math survive as math.
    assert!(
        html.contains("<mo>∗</mo>") || html.contains("<mo>*</mo>"),
        "f^* lost its star"
    );
    assert!(!html.contains("<em>"), "Markdown emphasis inside math");
    assert!(
        html.contains("<td><span class=\"katex\"><math"),
        "math in a table cell was split"
    );
    // The included code kept its dollar signs (KaTeX skips fenced code).
    assert!(html.contains("$5 and $6"), "included code was mangled");
    assert!(out.join("figures/f.svg").is_file());
    // Building again into the same directory is allowed (it is an earlier build).
    build_with_figures(&dir, Some(&out), &figs).unwrap();
}

#[test]
fn a_missing_include_is_reported() {
    let e = build_error(
        "missing_include",
        "# Chapter\n\n```rust\n{{#include ../nothere.rs}}\n```\n\n![f](figures/f.svg)\n",
    );
    assert!(e.contains("nothere.rs"), "{e}");
    assert!(e.contains("chapter.md"), "{e}");
}

#[test]
fn a_missing_anchor_is_reported_as_an_empty_code_block() {
    let e = build_error(
        "missing_anchor",
        "# Chapter\n\n```rust\n{{#include ../code.rs:nothere}}\n```\n\n![f](figures/f.svg)\n",
    );
    assert!(e.contains("chapter.md: empty `rust` code block"), "{e}");
}

#[test]
fn a_dangling_link_and_a_missing_fragment_are_reported() {
    let e = build_error(
        "dangling_link",
        "# Chapter\n\n[gone](gone.md) and [no such section](other.md#nowhere)\n\n![f](figures/f.svg)\n",
    );
    assert!(
        e.contains("chapter.md: href=\"gone.html\" points to a missing file"),
        "{e}"
    );
    assert!(e.contains("no element with id \"nowhere\" in other.html"), "{e}");
}

#[test]
fn bad_tex_is_reported() {
    let e = build_error(
        "bad_tex",
        "# Chapter\n\nA formula $\\frac{1}{\\notacommand}$.\n\n![f](figures/f.svg)\n",
    );
    assert!(e.contains("Rendering failed"), "{e}");
    assert!(e.contains("notacommand"), "{e}");
}

#[test]
fn a_tab_in_math_is_reported() {
    let e = build_error(
        "tab_in_math",
        "# Chapter\n\nA formula $n_{\\text{efc}}$ and a broken one $n_{\text{efc}}$.\n\n![f](figures/f.svg)\n",
    );
    assert!(
        e.contains("chapter.md: a control character (a tab?) in the math `n_{\\text{efc}}`"),
        "{e}"
    );
    assert_eq!(
        e.matches("control character").count(),
        1,
        "only the broken formula: {e}"
    );
}

#[test]
fn an_unmatched_dollar_is_reported() {
    let e = build_error(
        "unmatched_dollar",
        "# Chapter\n\nFine $x$, then $y without end.\n\n![f](figures/f.svg)\n",
    );
    assert!(e.contains("chapter.md: math delimiter `$` without a partner"), "{e}");
    assert!(e.contains("near: $y without end"), "{e}");
}

#[test]
fn a_missing_figure_is_reported() {
    let e = build_error(
        "missing_figure",
        "# Chapter\n\n![f](figures/f.svg) ![g](figures/nothere.svg)\n",
    );
    assert!(
        e.contains("chapter.md: src=\"figures/nothere.svg\" points to a missing file"),
        "{e}"
    );
}

#[test]
fn unreferenced_and_stale_figures_are_reported() {
    // f.svg is generated but not shown.
    let e = build_error("unreferenced_figure", "# Chapter\n\nNo figure.\n");
    assert!(e.contains("f.svg is generated but no chapter shows it"), "{e}");
    // old.svg sits in src/figures (left from an earlier run) but is not generated any more.
    let (dir, figs) = small_book(
        "stale_figure",
        "# Chapter\n\n![f](figures/f.svg) ![old](figures/old.svg)\n",
    );
    fs::write(dir.join("src/figures/old.svg"), SVG).unwrap();
    let e = build_with_figures(&dir, Some(&dir.join("out")), &figs)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("chapter.md: image \"figures/old.svg\" is not one of the generated figures"),
        "{e}"
    );
}

#[test]
fn a_chapter_missing_from_disk_is_an_error_not_a_new_file() {
    let (dir, figs) = small_book("missing_chapter", GOOD);
    fs::write(
        dir.join("src/SUMMARY.md"),
        "# Summary\n\n- [Chapter](chapter.md)\n- [Other](other.md)\n- [Ghost](ghost.md)\n",
    )
    .unwrap();
    let e = build_with_figures(&dir, Some(&dir.join("out")), &figs)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ghost.md"), "{e}");
    assert!(!dir.join("src/ghost.md").exists());
}

#[test]
fn a_foreign_output_directory_is_not_emptied() {
    let (dir, figs) = small_book("foreign_out", GOOD);
    let out = dir.join("precious");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("keep.txt"), "data").unwrap();
    let e = build_with_figures(&dir, Some(&out), &figs).unwrap_err().to_string();
    assert!(e.contains("refusing to delete"), "{e}");
    assert!(out.join("keep.txt").is_file());
}

#[test]
fn the_real_book_builds_with_every_figure() {
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("book");
    let out = scratch("real_book");
    let report = build(&book, Some(&out)).unwrap_or_else(|e| panic!("{e}"));
    let summary = fs::read_to_string(book.join("src/SUMMARY.md")).unwrap();
    for ch in [
        "introduction",
        "spatial",
        "joints",
        "rnea",
        "crba",
        "aba",
        "performance",
    ] {
        assert!(
            summary.contains(&format!("({ch}.md)")),
            "SUMMARY.md does not list {ch}.md"
        );
        assert!(out.join(format!("{ch}.html")).is_file(), "{ch}.html was not written");
    }
    assert!(report.index.is_file());
    for f in &report.figures {
        let name = f.file_name().unwrap();
        assert!(
            out.join("figures").join(name).is_file(),
            "figure {} not in the output",
            f.display()
        );
    }
    // Offline: no page loads anything from the network.
    for entry in fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html") {
            let html = fs::read_to_string(&path).unwrap();
            assert!(
                !html.contains("src=\"http") && !html.contains("href=\"https://cdn"),
                "{} uses the network",
                path.display()
            );
        }
    }
}
