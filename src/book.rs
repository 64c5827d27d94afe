//! `mbd book`: regenerate every figure, build the HTML book and check what was built
//! (compiled only with the cargo feature `book`).
//!
//! The book is built in-process with `mdbook-driver` and the KaTeX preprocessor, which renders
//! every formula to MathML at build time, so the pages read offline. mdBook reports most problems
//! only as `tracing` events and still returns `Ok`, so this module treats every WARN or ERROR
//! event as a failure and then reads the generated pages looking for what mdBook does not report
//! at all:
//!
//! | mistake in a chapter | what mdBook does | what [`build`] reports |
//! |---|---|---|
//! | `{{#include}}` of a missing file | logs an error, leaves the directive in the text | the event, and the leftover `{{#` |
//! | `{{#include file:anchor}}` with a missing anchor | includes nothing, silently | an empty code block |
//! | link to a missing chapter or file | rewrites `.md` to `.html`, silently | a link to a missing file |
//! | link to a missing `#heading` | nothing | a link to a missing fragment |
//! | malformed TeX | logs a warning, keeps the source | the event |
//! | a `$` without its partner | (KaTeX) leaves the rest of the chapter unrendered, silently | the `$` and where it is |
//! | a tab or other control character in math (`\text` whose `\t` became a tab) | renders it as nothing, silently | the formula |
//! | `*`, `_` or a vertical bar inside rendered math | (Markdown) reads them as emphasis or table cells | prevented: written as character references |
//! | image of a figure nobody generates | copies whatever is in `src/figures` | a reference to an unknown figure |
//! | a generated figure no chapter shows | nothing | an unreferenced figure |
//! | an interactive figure (`<figure class="mbd-slider">`) whose range does not match its frames, a frame without its `data-value` label, a default frame other than the range's value, or a page without the slider script | nothing | the figure and what is wrong (each frame's file is checked as every image is) |

use crate::error::{Error, Result};
use mdbook_driver::book::BookItem;
use mdbook_driver::config::Config;
use mdbook_driver::MDBook;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::{Dispatch, Event, Level, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

/// What a successful [`build`] produced.
#[derive(Clone, Debug)]
pub struct BookReport {
    /// The directory holding the HTML book.
    pub out_dir: PathBuf,
    /// The book's front page (`out_dir/index.html`).
    pub index: PathBuf,
    /// Chapter source files, relative to the book's `src` directory, in reading order.
    pub chapters: Vec<PathBuf>,
    /// The figures written by [`crate::figures::generate_all`] (or given to
    /// [`build_with_figures`]).
    pub figures: Vec<PathBuf>,
    /// How many links, image sources and fragment references were checked.
    pub links_checked: usize,
}

/// Regenerates every figure into `book_dir/src/figures` with [`crate::figures::generate_all`],
/// then builds and checks the book as [`build_with_figures`] does.
pub fn build(book_dir: &Path, out_dir: Option<&Path>) -> Result<BookReport> {
    let figures = crate::figures::generate_all(&book_dir.join("src").join("figures"))?;
    build_with_figures(book_dir, out_dir, &figures)
}

/// Builds the HTML book in `book_dir` into `out_dir` (default `book_dir/build`) and checks it.
///
/// `figures` are the figure files the book must show (each under `book_dir/src`): every one must
/// be referenced by some chapter, and every image a chapter takes from the same directories must be
/// one of them. The build fails, listing every problem with the chapter file it comes from, when
/// mdBook or KaTeX logs a warning or an error, or when the pages contain a leftover `{{#`
/// directive, an empty code block, or a link or image source pointing to a file (or `#fragment`)
/// missing from the output.
///
/// Whatever `book.toml` says, the build does not create missing chapters (`create-missing =
/// false`) and KaTeX writes MathML without the CDN stylesheet, after the `links` preprocessor has
/// expanded every include. mdBook empties the output directory before writing into it, so an
/// existing non-empty `out_dir` that does not look like an earlier book build is refused.
pub fn build_with_figures(book_dir: &Path, out_dir: Option<&Path>, figures: &[PathBuf]) -> Result<BookReport> {
    let cwd = std::env::current_dir().map_err(|e| Error::Io {
        path: ".".into(),
        why: format!("current directory: {e}"),
    })?;
    let book_dir = cwd.join(book_dir);
    let out = match out_dir {
        Some(d) => cwd.join(d),
        None => book_dir.join("build"),
    };
    check_out_dir(&out)?;
    let toml = book_dir.join("book.toml");
    if !toml.is_file() {
        return Err(Error::Io {
            path: toml.display().to_string(),
            why: "no such file (is this a book directory?)".into(),
        });
    }
    let mut config = Config::from_disk(&toml).map_err(|e| Error::Io {
        path: toml.display().to_string(),
        why: format!("{e:#}"),
    })?;
    configure(&mut config, &out)?;
    let src_name = config.book.src.clone();

    let recorder = Recorder::default();
    let outcome = with_recorder(&recorder, || -> std::result::Result<(Vec<PathBuf>, PathBuf), String> {
        let mut md = MDBook::load_with_config(&book_dir, config).map_err(|e| format!("{e:#}"))?;
        // Replaces, in place (same name, same position in the run order), the `mdbook-katex`
        // command that `[preprocessor.katex]` would otherwise start as a separate process.
        md.with_preprocessor(OfflineMath);
        let chapters = md
            .iter()
            .filter_map(|item| match item {
                BookItem::Chapter(ch) => ch.path.clone(),
                _ => None,
            })
            .collect();
        md.build().map_err(|e| format!("{e:#}"))?;
        Ok((chapters, md.build_dir_for("html")))
    });

    // Warnings and errors first; if mdBook got as far as writing the pages, also read them, so
    // that each problem is tied to the chapter file it comes from.
    let mut problems: Vec<String> = recorder.take();
    let (chapters, html_dir) = match outcome {
        Ok(x) => x,
        Err(e) => {
            problems.push(e);
            return Err(book_error(&book_dir, &problems));
        }
    };
    let src_dir = book_dir.join(&src_name);
    let mut figure_rel = BTreeSet::new();
    for f in figures {
        let abs = cwd.join(f);
        match abs.strip_prefix(&src_dir) {
            Ok(rel) => {
                figure_rel.insert(normalize(rel).unwrap_or_else(|| rel.to_path_buf()));
            }
            Err(_) => problems.push(format!("figure {} is not inside {}", f.display(), src_dir.display())),
        }
    }
    let scan = scan_output(&src_dir, &html_dir, &chapters, &figure_rel);
    problems.extend(scan.problems);
    for f in &figure_rel {
        if !scan.targets.contains(f) {
            problems.push(format!(
                "figure {} is generated but no chapter shows it",
                src_dir.join(f).display()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(book_error(&book_dir, &problems));
    }
    Ok(BookReport {
        index: html_dir.join("index.html"),
        out_dir: html_dir,
        chapters,
        figures: figures.to_vec(),
        links_checked: scan.links_checked,
    })
}

/// The settings the book's promises depend on, forced over whatever `book.toml` says.
fn configure(config: &mut Config, out: &Path) -> Result<()> {
    config.build.create_missing = false;
    config.build.build_dir = out.to_path_buf();
    let mut after: Vec<String> = config
        .get::<Vec<String>>("preprocessor.katex.after")
        .ok()
        .flatten()
        .unwrap_or_default();
    if !after.iter().any(|a| a == "links") {
        after.push("links".into());
    }
    let err = |key: &str, e: mdbook_driver::errors::Error| Error::Book {
        what: "book.toml".into(),
        why: format!("cannot set {key}: {e:#}"),
    };
    config
        .set("preprocessor.katex.output", "mathml")
        .map_err(|e| err("output", e))?;
    config
        .set("preprocessor.katex.no-css", true)
        .map_err(|e| err("no-css", e))?;
    config
        .set("preprocessor.katex.throw-on-error", true)
        .map_err(|e| err("throw-on-error", e))?;
    config
        .set("preprocessor.katex.after", after)
        .map_err(|e| err("after", e))
}

/// Refuses an output directory whose contents mdBook would delete unless it is empty or an
/// earlier HTML build (mdBook writes `.nojekyll` into every HTML build).
fn check_out_dir(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        return Err(Error::Io {
            path: out.display().to_string(),
            why: "exists and is not a directory".into(),
        });
    }
    let mut entries = std::fs::read_dir(out).map_err(|e| Error::Io {
        path: out.display().to_string(),
        why: e.to_string(),
    })?;
    if entries.next().is_none() || out.join(".nojekyll").exists() {
        return Ok(());
    }
    Err(Error::Io {
        path: out.display().to_string(),
        why: "is not empty and is not an earlier book build; refusing to delete its contents (choose another --out)"
            .into(),
    })
}

fn book_error(book_dir: &Path, problems: &[String]) -> Error {
    let mut msg = format!("{} problem(s):", problems.len());
    for p in problems {
        let _ = write!(msg, "\n  {p}");
    }
    Error::Book {
        what: book_dir.display().to_string(),
        why: msg,
    }
}

// ---------------------------------------------------------------------------------------------
// Math.

/// The `katex` preprocessor, run in-process: every `$...$` and `$$...$$` outside code is rendered
/// to MathML by KaTeX (`mdbook_katex`'s scanner and renderer, with `[preprocessor.katex]`'s
/// options), the TeX source KaTeX keeps beside it is dropped ([`drop_tex_annotation`], so that
/// search shows symbols, not TeX), and the MathML is then protected from Markdown.
///
/// The protection is needed because the rendered math stays inside the chapter's Markdown: the
/// text between its tags (the `<mo>*</mo>` of `f^*`, a `_` or a vertical bar in an operator)
/// would otherwise be read as emphasis, links, code spans or table-cell separators, which breaks
/// the tag structure. Those characters are written as character
/// references instead, which Markdown passes through as plain text.
struct OfflineMath;

impl mdbook_preprocessor::Preprocessor for OfflineMath {
    fn name(&self) -> &str {
        "katex"
    }

    fn run(
        &self,
        ctx: &mdbook_preprocessor::PreprocessorContext,
        mut book: mdbook_preprocessor::book::Book,
    ) -> mdbook_preprocessor::errors::Result<mdbook_preprocessor::book::Book> {
        use mdbook_katex::preprocess::{get_render_tasks, Render};
        let cfg = mdbook_katex::cfg::get_config(&ctx.config)?;
        let extra = cfg.build_extra_opts();
        let (inline, display) = cfg.build_opts(&ctx.root);
        book.for_each_chapter_mut(|chapter| {
            let mut out = String::with_capacity(chapter.content.len());
            let tasks = get_render_tasks(&chapter.content, "", &extra);
            // KaTeX's scanner stops at a `$` without a partner and leaves the rest of the chapter
            // as text: such a `$` can only be in the last text piece.
            if let Some(Render::Text(last)) = tasks.last() {
                if let Some(i) = unmatched_dollar(last) {
                    let near: String = last[i..].chars().take(50).collect();
                    let chapter_path = chapter.source_path.as_ref().or(chapter.path.as_ref());
                    tracing::warn!(
                        "{}: math delimiter `$` without a partner (math after it is not rendered; write \\$ for a dollar sign), near: {}",
                        chapter_path.map(|p| p.display().to_string()).unwrap_or_else(|| chapter.name.clone()),
                        near.replace('\n', " ")
                    );
                }
            }
            for task in &tasks {
                if let Render::InlineTask(tex) | Render::DisplayTask(tex) = task {
                    // a tab or another control character renders as nothing and eats the letter
                    // after a backslash: `\text`, `\times` or `\to` written through a string
                    // that turned `\t` into a tab
                    if tex.chars().any(|c| c.is_control() && c != '\n' && c != '\r') {
                        let chapter_path = chapter.source_path.as_ref().or(chapter.path.as_ref());
                        tracing::warn!(
                            "{}: a control character (a tab?) in the math `{}`: `\\text`, `\\times` or `\\to` whose `\\t` became a tab?",
                            chapter_path.map(|p| p.display().to_string()).unwrap_or_else(|| chapter.name.clone()),
                            tex.escape_debug()
                        );
                    }
                }
            }
            for task in tasks {
                match task {
                    Render::Text(t) => out.push_str(t),
                    Render::InlineTask(tex) => {
                        let html =
                            mdbook_katex::render::render(tex, inline.clone(), extra.clone(), false);
                        out.push_str(&protect_from_markdown(&drop_tex_annotation(&html)));
                    }
                    Render::DisplayTask(tex) => {
                        let html =
                            mdbook_katex::render::render(tex, display.clone(), extra.clone(), true);
                        out.push_str(&protect_from_markdown(&drop_tex_annotation(&html)));
                    }
                }
            }
            chapter.content = out;
        });
        Ok(book)
    }
}

/// The byte offset of the first `$` in `text` that is neither escaped (`\\$`) nor inside a code
/// span or fence: the same rules as KaTeX's scanner (`mdbook_katex::scan`).
fn unmatched_dollar(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'$' => return Some(i),
            b'`' => {
                let run = b[i..].iter().take_while(|&&c| c == b'`').count();
                let fence = "`".repeat(run);
                // Skip to the closing run of the same length; an unclosed run ends the scan.
                let mut j = i + run;
                loop {
                    let k = text[j..].find(&fence)?;
                    let end = j + k + run;
                    if b.get(end) == Some(&b'`') {
                        j = end + b[end..].iter().take_while(|&&c| c == b'`').count();
                    } else {
                        i = end;
                        break;
                    }
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Removes the TeX source KaTeX keeps beside its MathML (`<annotation
/// encoding="application/x-tex">...</annotation>`). Browsers do not show it, but mdBook's search
/// indexes the text of every element, so without this a search hit would quote the raw TeX
/// (`H(q) \ddot q + ...`) instead of the formula's symbols.
fn drop_tex_annotation(html: &str) -> String {
    const OPEN: &str = "<annotation encoding=\"application/x-tex\">";
    const CLOSE: &str = "</annotation>";
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        rest = rest.find(CLOSE).map_or("", |e| &rest[e + CLOSE.len()..]);
    }
    out.push_str(rest);
    out
}

/// Writes the characters Markdown would interpret, in the text between HTML tags, as character
/// references. Tags and their attributes are left alone; on a failed rendering (the TeX source
/// with its delimiters, already reported as a warning) the text is left alone too.
fn protect_from_markdown(html: &str) -> String {
    if !html.starts_with('<') {
        return html.to_string();
    }
    let mut out = String::with_capacity(html.len() + html.len() / 8);
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => {
                in_tag = true;
                out.push(ch);
            }
            '>' => {
                in_tag = false;
                out.push(ch);
            }
            '\\' | '*' | '_' | '`' | '[' | ']' | '|' | '~' | '$' | '!' | '{' | '}' if !in_tag => {
                let _ = write!(out, "&#{};", ch as u32);
            }
            _ => out.push(ch),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Recording mdBook's and KaTeX's warnings.

/// A `tracing` layer that keeps every WARN and ERROR event as one line of text.
#[derive(Clone, Default)]
struct Recorder {
    events: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl<S: Subscriber> Layer<S> for Recorder {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        // More verbose levels compare greater: WARN and ERROR are the ones <= WARN.
        if *meta.level() > Level::WARN {
            return;
        }
        let mut text = Fields::default();
        event.record(&mut text);
        let line = format!("{} ({}): {}", meta.level(), meta.target(), text.0.trim());
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }
}

/// Formats an event's fields: the message first, then `name=value` pairs.
#[derive(Default)]
struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            self.0 = format!("{value:?} {rest}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            let rest = std::mem::take(&mut self.0);
            self.0 = format!("{value} {rest}");
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

/// Runs `f` with `recorder` receiving the tracing events of this build, and only of this build:
/// the recorder is the thread's default dispatcher while `f` runs. mdBook and the math
/// preprocessor ([`OfflineMath`], which renders chapter by chapter on this thread rather than on
/// `mdbook_katex`'s rayon pool) emit all their events on this thread. No global subscriber is
/// installed, so several books can be built at once (as the tests do) without mixing warnings.
fn with_recorder<T>(recorder: &Recorder, f: impl FnOnce() -> T) -> T {
    let dispatch = Dispatch::new(Registry::default().with(recorder.clone().with_filter(LevelFilter::WARN)));
    tracing::dispatcher::with_default(&dispatch, f)
}

// ---------------------------------------------------------------------------------------------
// Reading the pages mdBook wrote.

#[derive(Default)]
struct Scan {
    problems: Vec<String>,
    /// Every file (relative to the output directory) some chapter links to or shows.
    targets: HashSet<PathBuf>,
    links_checked: usize,
}

fn scan_output(src_dir: &Path, html_dir: &Path, chapters: &[PathBuf], figures: &BTreeSet<PathBuf>) -> Scan {
    let mut scan = Scan::default();
    let mut ids: HashMap<PathBuf, Option<HashSet<String>>> = HashMap::new();
    let figure_dirs: BTreeSet<PathBuf> = figures
        .iter()
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .collect();
    for chapter in chapters {
        let source = src_dir.join(chapter);
        let page_rel = chapter.with_extension("html");
        let page = html_dir.join(&page_rel);
        let html = match std::fs::read_to_string(&page) {
            Ok(h) => h,
            Err(e) => {
                scan.problems.push(format!(
                    "{}: page {} was not written: {e}",
                    source.display(),
                    page.display()
                ));
                continue;
            }
        };
        let main = main_content(&html);
        let mut report = |what: String| scan.problems.push(format!("{}: {what}", source.display()));

        for directive in leftover_directives(main) {
            report(format!("directive `{directive}` was not expanded (missing file?)"));
        }
        for problem in slider_problems(main, &html) {
            report(problem);
        }
        for lang in empty_code_blocks(main) {
            report(format!(
                "empty {lang}code block (an include whose anchor or line range matched nothing?)"
            ));
        }
        let page_dir = page_rel.parent().map(Path::to_path_buf).unwrap_or_default();
        for (attr, url) in urls(&html) {
            let Some((path, fragment)) = split_url(&url) else {
                continue;
            };
            scan.links_checked += 1;
            let target = if path.is_empty() {
                Some(page_rel.clone())
            } else if let Some(abs) = path.strip_prefix('/') {
                normalize(Path::new(abs))
            } else {
                normalize(&page_dir.join(&path))
            };
            let Some(target) = target else {
                report(format!("{attr}=\"{url}\" points outside the book"));
                continue;
            };
            let file = html_dir.join(&target);
            if !file.is_file() {
                report(format!(
                    "{attr}=\"{url}\" points to a missing file ({})",
                    file.display()
                ));
                continue;
            }
            if attr == "src" && figure_dirs.iter().any(|d| target.starts_with(d)) && !figures.contains(&target) {
                report(format!(
                    "image \"{url}\" is not one of the generated figures (a stale or misnamed file?)"
                ));
            }
            if let Some(frag) = fragment {
                let known = ids.entry(target.clone()).or_insert_with(|| {
                    std::fs::read_to_string(&file)
                        .ok()
                        .filter(|_| target.extension().is_some_and(|e| e == "html"))
                        .map(|h| element_ids(&h))
                });
                if let Some(known) = known {
                    if !known.contains(&frag) {
                        report(format!(
                            "{attr}=\"{url}\": no element with id \"{frag}\" in {}",
                            target.display()
                        ));
                    }
                }
            }
            scan.targets.insert(target);
        }
    }
    scan
}

/// The chapter's own text: mdBook puts it in `<main>`; the rest of the page is the theme.
fn main_content(html: &str) -> &str {
    match (html.find("<main"), html.rfind("</main>")) {
        (Some(a), Some(b)) if a < b => &html[a..b],
        _ => html,
    }
}

/// The value of attribute `name` in the tag `tag` (its text from `<` to `>`), entity-decoded.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let pat = format!(" {name}=\"");
    let i = tag.find(&pat)? + pat.len();
    let end = tag[i..].find('"')?;
    Some(decode_entities(&tag[i..i + end]))
}

/// Whether the tag has the boolean attribute `name` (` hidden>`, ` hidden=""` ...).
fn has_flag(tag: &str, name: &str) -> bool {
    // mdBook writes a boolean attribute as `hidden=""`.
    let empty = format!("{name}=\"\"");
    tag.trim_end_matches('>')
        .trim_end_matches('/')
        .split_whitespace()
        .skip(1)
        .any(|a| a == name || a == empty)
}

/// The tags `<name ...>` in `html`.
fn tags<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name}");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&open) {
        let tail = &rest[i..];
        let Some(end) = tail.find('>') else { break };
        if tail[open.len()..].starts_with(|c: char| c.is_whitespace() || c == '>') {
            out.push(&tail[..=end]);
        }
        rest = &tail[end..];
    }
    out
}

/// The problems of the page's interactive figures (`<figure class="mbd-slider">`, switched by
/// `book/theme/slider.js`): the range input must run from 0 to the number of frames minus one,
/// every frame needs its `data-value` label, exactly one frame (the one at the range's value) may
/// be shown without JavaScript, and the page must load the script. `page` is the whole page,
/// `main` its chapter text.
fn slider_problems(main: &str, page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = main;
    let mut index = 0;
    while let Some(i) = rest.find("<figure class=\"mbd-slider\"") {
        index += 1;
        let tail = &rest[i..];
        let end = tail.find("</figure>").unwrap_or(tail.len());
        let fig = &tail[..end];
        rest = &tail[end..];
        let mut say = |what: String| out.push(format!("interactive figure {index}: {what}"));
        let frames = tags(fig, "img");
        if frames.is_empty() {
            say("no frames (<img>)".into());
            continue;
        }
        for (k, f) in frames.iter().enumerate() {
            if attribute(f, "data-value").is_none_or(|v| v.trim().is_empty()) {
                say(format!("frame {k} has no data-value label"));
            }
        }
        let inputs: Vec<&str> = tags(fig, "input")
            .into_iter()
            .filter(|t| attribute(t, "type").as_deref() == Some("range"))
            .collect();
        let [input] = inputs[..] else {
            say(format!("{} range inputs, expected one", inputs.len()));
            continue;
        };
        let num = |name: &str| attribute(input, name).and_then(|v| v.trim().parse::<usize>().ok());
        let (min, max, value) = (num("min"), num("max"), num("value"));
        if min != Some(0) || max != Some(frames.len() - 1) {
            say(format!(
                "the range runs from {min:?} to {max:?}, but there are {} frames (0 to {})",
                frames.len(),
                frames.len() - 1
            ));
        }
        let shown: Vec<usize> = (0..frames.len()).filter(|&k| !has_flag(frames[k], "hidden")).collect();
        if value.is_none() || shown != [value.unwrap_or(usize::MAX)] {
            say(format!(
                "frames {shown:?} are shown without JavaScript; expected exactly the range's value {value:?}"
            ));
        }
        // mdBook names the script with a content hash: theme/slider-0123abcd.js
        if !page.contains("theme/slider") {
            say("the page does not load theme/slider.js (additional-js in book.toml)".into());
        }
    }
    out
}

/// `{{#...}}` directives left in the text (the include preprocessor leaves them on failure).
fn leftover_directives(html: &str) -> Vec<String> {
    html.match_indices("{{#")
        .map(|(i, _)| {
            let tail = &html[i..];
            match tail.find("}}") {
                Some(e) if e < 200 => tail[..e + 2].to_string(),
                _ => tail.chars().take(60).collect(),
            }
        })
        .collect()
}

/// Code blocks (`<pre><code>`) with nothing but white space inside, by language class.
fn empty_code_blocks(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<pre") {
        rest = &rest[i + 4..];
        let Some(close) = rest.find("</pre>") else {
            break;
        };
        let block = &rest[..close];
        if let Some(c) = block.find("<code") {
            let code = &block[c..];
            let Some(gt) = code.find('>') else { continue };
            let inner = code[gt + 1..]
                .rsplit_once("</code>")
                .map(|(a, _)| a)
                .unwrap_or(&code[gt + 1..]);
            if strip_tags(&drop_boring(inner)).trim().is_empty() {
                let lang = code[..gt]
                    .split("language-")
                    .nth(1)
                    .map(|s| s.split(|ch: char| ch == '"' || ch.is_whitespace()).next().unwrap_or(""))
                    .map(|l| format!("`{l}` "))
                    .unwrap_or_default();
                out.push(lang);
            }
        }
        rest = &rest[close..];
    }
    out
}

/// Removes mdBook's hidden playground lines (`<span class="boring">...</span>`: the
/// `fn main() {` wrapper it adds around Rust code), which are not part of the chapter's code.
fn drop_boring(s: &str) -> String {
    const OPEN: &str = "<span class=\"boring\">";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        rest = &rest[i + OPEN.len()..];
        rest = rest.find("</span>").map_or("", |e| &rest[e + "</span>".len()..]);
    }
    out.push_str(rest);
    out
}

fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for ch in s.chars() {
        match ch {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Every `href`, `src` and `data` attribute value in the page, entity-decoded.
fn urls(html: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for attr in ["href", "src", "data"] {
        let pat = format!("{attr}=\"");
        let mut rest = html;
        while let Some(i) = rest.find(&pat) {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + pat.len()..];
            if !matches!(before, Some(c) if c.is_whitespace()) {
                continue;
            }
            let Some(end) = rest.find('"') else { break };
            out.push((attr, decode_entities(&rest[..end])));
            rest = &rest[end..];
        }
    }
    out
}

/// The path and fragment of a link into the book, or None for external links (with a scheme,
/// protocol-relative) and links that are only `?query`.
fn split_url(url: &str) -> Option<(String, Option<String>)> {
    let url = url.trim();
    if url.is_empty() || url.starts_with("//") {
        return None;
    }
    let scheme_end = url.find(':');
    let first_sep = url.find(['/', '?', '#']);
    if let Some(c) = scheme_end {
        if first_sep.is_none_or(|s| c < s) {
            return None; // http:, https:, mailto:, data:, javascript:, ...
        }
    }
    let (before_frag, frag) = match url.split_once('#') {
        Some((a, f)) => (a, Some(percent_decode(f))),
        None => (url, None),
    };
    let path = before_frag.split('?').next().unwrap_or("");
    let frag = frag.filter(|f| !f.is_empty());
    if path.is_empty() && frag.is_none() {
        return None;
    }
    Some((percent_decode(path), frag))
}

/// Lexical normalization: drops `.`, resolves `..`; None if the path climbs above its root.
fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(s) => out.push(s),
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

fn element_ids(html: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for pat in [" id=\"", " name=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(pat) {
            rest = &rest[i + pat.len()..];
            let Some(end) = rest.find('"') else { break };
            out.insert(decode_entities(&rest[..end]));
            rest = &rest[end..];
        }
    }
    out
}

fn decode_entities(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interactive_figures_are_checked() {
        let good = r#"<figure class="mbd-slider"><img src="figures/a_0.svg" data-value="T = 1" hidden>
<img src="figures/a_1.svg" data-value="T = 2"><figcaption><input type="range" min="0" max="1" value="1">
<output></output></figcaption></figure>"#;
        let page = "<script src=\"theme/slider-e4f01f34.js\"></script>";
        assert!(
            slider_problems(good, page).is_empty(),
            "{:?}",
            slider_problems(good, page)
        );
        assert_eq!(slider_problems(good, "").len(), 1, "the script is missing");
        let too_short = good.replace("max=\"1\"", "max=\"2\"");
        assert_eq!(slider_problems(&too_short, page).len(), 1);
        let two_shown = good.replace(" hidden>", ">");
        assert_eq!(slider_problems(&two_shown, page).len(), 1);
        let unlabelled = good.replace(" data-value=\"T = 2\"", "");
        assert_eq!(slider_problems(&unlabelled, page).len(), 1);
        let wrong_default = good.replace("value=\"1\"", "value=\"0\"");
        assert_eq!(slider_problems(&wrong_default, page).len(), 1);
        assert!(has_flag("<img src=\"x\" hidden>", "hidden"));
        assert!(has_flag("<img src=\"x\" hidden=\"\">", "hidden"));
        assert!(!has_flag("<img src=\"hidden\" alt=\"x\">", "hidden"));
    }

    #[test]
    fn urls_are_split_into_path_and_fragment() {
        assert_eq!(split_url("https://example.com/a"), None);
        assert_eq!(split_url("mailto:x@y"), None);
        assert_eq!(split_url("//cdn/x.js"), None);
        assert_eq!(
            split_url("rnea.html#the-algorithm"),
            Some(("rnea.html".into(), Some("the-algorithm".into())))
        );
        assert_eq!(
            split_url("figures/a%20b.svg?v=1"),
            Some(("figures/a b.svg".into(), None))
        );
        assert_eq!(split_url("#top"), Some(("".into(), Some("top".into()))));
        assert_eq!(split_url("a:b/c.html"), None);
        assert_eq!(split_url("dir/a:b.html"), Some(("dir/a:b.html".into(), None)));
    }

    #[test]
    fn math_text_is_protected_from_markdown_but_tags_are_not() {
        let html =
            r#"<math><mi>f</mi><mo>*</mo><annotation encoding="application/x-tex">f^* |a_1|</annotation></math>"#;
        let p = protect_from_markdown(html);
        assert_eq!(
            p,
            "<math><mi>f</mi><mo>&#42;</mo><annotation encoding=\"application/x-tex\">f^&#42; &#124;a&#95;1&#124;</annotation></math>"
        );
        assert_eq!(protect_from_markdown("$x_1$"), "$x_1$");
    }

    #[test]
    fn the_tex_source_is_dropped_from_rendered_math() {
        let html = r#"<math><semantics><mrow><mi>q</mi></mrow><annotation encoding="application/x-tex">\dot q</annotation></semantics></math> and <math><annotation encoding="application/x-tex">x</annotation></math>"#;
        assert_eq!(
            drop_tex_annotation(html),
            "<math><semantics><mrow><mi>q</mi></mrow></semantics></math> and <math></math>"
        );
        assert_eq!(drop_tex_annotation("no math"), "no math");
    }

    #[test]
    fn unmatched_dollars_are_found_outside_code_only() {
        assert_eq!(
            unmatched_dollar("costs \\$5, `let s = \"$\";` and ```\n$x\n```\n fine"),
            None
        );
        assert_eq!(unmatched_dollar("a `b` then $x without end"), Some(11));
        assert_eq!(unmatched_dollar("``code with ` and $``, then $"), Some(28));
    }

    #[test]
    fn normalize_resolves_parent_components() {
        assert_eq!(normalize(Path::new("a/./b/../c.html")), Some(PathBuf::from("a/c.html")));
        assert_eq!(normalize(Path::new("../x")), None);
    }

    #[test]
    fn scanners_find_what_mdbook_leaves_behind() {
        let html = r#"<main><p>{{#include ../../src/nothere.rs}}</p>
<pre><code class="language-rust">
</code></pre><pre><code class="language-rust"><span class="boring">fn main() {
</span>let x = 1;<span class="boring">}</span></code></pre>
<pre class="playground"><code class="language-rust"><span class="boring">#![allow(unused)]
</span><span class="boring">fn main() {
</span>
<span class="boring">}</span></code></pre>
<a href="x.html#y">x</a> <img src="figures/f.svg" alt=""></main>"#;
        assert_eq!(
            leftover_directives(html),
            vec!["{{#include ../../src/nothere.rs}}".to_string()]
        );
        assert_eq!(
            empty_code_blocks(html),
            vec!["`rust` ".to_string(), "`rust` ".to_string()]
        );
        let u = urls(html);
        assert!(u.contains(&("href", "x.html#y".to_string())));
        assert!(u.contains(&("src", "figures/f.svg".to_string())));
        assert_eq!(element_ids(r#"<h2 id="a-b">"#), HashSet::from(["a-b".to_string()]));
    }
}
