//! The built book as a reader sees it: every chapter opened in headless Chromium, offline.
//!
//! The HTML checks of `tests/book.rs` cannot see what a browser does with the pages. Here each
//! chapter is loaded from disk by Chromium (with DNS switched off, so nothing could be fetched
//! even if a page asked), a small probe script measures the laid-out page, and the test checks:
//!
//! - every formula (`<math>`) has a non-zero size;
//! - a dotted symbol (`\dot q`, `\ddot q`) is taller than its base letter and its dot is drawn
//!   with the book's math font: with a text font the dot lands on the letter and, at reading size,
//!   "H q-double-dot + C = tau" reads "H q + C = tau";
//! - the bracket of a matrix (`\begin{bmatrix}`) stretches over its rows;
//! - the book's own math font (`book/src/fonts/STIXMath-Regular.otf`) is the one that loaded;
//! - every figure (`<img>`) loaded and has a non-zero size, and every interactive figure
//!   (`<figure class="mbd-slider">`) shows exactly its frame for each value of its slider;
//! - the page made no network request (resource timing in the page, and Chromium's network log
//!   for any request a page initiated);
//! - the search index quotes formulas as symbols, not as raw TeX.
//!
//! It needs Chromium (`apt-get install chromium`; `.ci/run` installs it). Without it the test
//! prints a loud SKIPPED message, and fails instead when `CI` is set, so that CI cannot pass
//! without running it. `MBD_CHROMIUM` names another Chromium binary.
#![cfg(feature = "book")]

use mbd::book::build;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The family name `book/theme/math.css` gives the shipped font.
const MATH_FONT: &str = "mbd STIX Math";

/// Wall-clock limit for one Chromium run (a page normally takes 1-3 s).
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Measures the page once it, its images and its fonts have loaded, and appends the results as
/// JSON in `<pre id="mbd-probe">`, which `--dump-dom` then prints. `MATHFONT` stands for
/// [`MATH_FONT`].
const PROBE_JS: &str = r#"<script>
(function () {
  function h(e) { return e.getBoundingClientRect().height; }
  function probe() {
    var main = document.querySelector('main') || document.body;
    var out = { math: 0, math_empty: [], dots: [], fences: [], images: [], sliders: [], resources: [], fonts: [] };
    main.querySelectorAll('math').forEach(function (m) {
      var r = m.getBoundingClientRect();
      out.math += 1;
      if (!(r.width > 0 && r.height > 0)) out.math_empty.push(m.textContent.slice(0, 60));
    });
    main.querySelectorAll('mover').forEach(function (mv) {
      var base = mv.firstElementChild, acc = mv.lastElementChild;
      if (!base || !acc || base === acc) return;
      var t = acc.textContent.trim();
      if (t !== '\u02d9' && t !== '\u00a8') return;
      out.dots.push({ base: base.textContent, ratio: h(mv) / Math.max(h(base), 1e-9),
                      font: getComputedStyle(acc).fontFamily.split(',')[0].replace(/"/g, '').trim() });
    });
    main.querySelectorAll('mtable').forEach(function (tb) {
      var open = tb.previousElementSibling;
      if (!open || open.tagName.toLowerCase() !== 'mo' || tb.querySelectorAll('mtr').length < 2) return;
      out.fences.push({ fence: open.textContent, ratio: h(open) / Math.max(h(tb), 1e-9) });
    });
    main.querySelectorAll('img').forEach(function (im) {
      var r = im.getBoundingClientRect();
      // mdBook adds a hidden copy of every image for click-to-zoom: it must load, but has no size.
      out.images.push({ src: im.getAttribute('src'), complete: im.complete, natural: im.naturalWidth,
                        zoom_copy: !!im.closest('.img-wrapper'), slider: !!im.closest('figure.mbd-slider'),
                        width: r.width, height: r.height });
    });
    // Interactive figures: move each slider through all its values; after each, exactly the frame
    // at that value must be laid out with a size.
    main.querySelectorAll('figure.mbd-slider').forEach(function (fig) {
      var input = fig.querySelector('input[type="range"]');
      var frames = fig.querySelectorAll('img');
      var steps = [];
      if (input) {
        for (var k = Number(input.min); k <= Number(input.max); k++) {
          input.value = String(k);
          input.dispatchEvent(new Event('input'));
          var shown = [];
          frames.forEach(function (im, i) {
            var r = im.getBoundingClientRect();
            if (r.width > 0 && r.height > 0) shown.push(i);
          });
          var label = fig.querySelector('output');
          steps.push({ value: k, shown: shown, label: label ? label.textContent : '' });
        }
      }
      out.sliders.push({ frames: frames.length, steps: steps });
    });
    performance.getEntriesByType('resource').forEach(function (e) { out.resources.push(e.name); });
    document.fonts.forEach(function (f) { out.fonts.push(f.family.replace(/"/g, '') + ':' + f.status); });
    // The loaded math font covers the dot and double-dot accents (true only once it has loaded).
    out.accents_covered = document.fonts.check('16px "MATHFONT"', '\u02d9\u00a8');
    var pre = document.createElement('pre');
    pre.id = 'mbd-probe';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  window.addEventListener('load', function () {
    document.fonts.ready.then(function () { setTimeout(probe, 100); });
  });
})();
</script>"#;

/// The Chromium binary, or None when there is none on this machine.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MBD_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// What one page load produced: the probe's measurements and the URLs of network requests a
/// page initiated (from Chromium's network log).
struct Load {
    probe: Value,
    page_requests: Vec<String>,
}

/// Loads `page` (a file inside the built book) with the probe script added, offline, and
/// returns the probe's measurements. The probe copy lives beside the page so that every
/// relative URL resolves as in the real page.
fn load(browser: &Path, page: &Path, scratch: &Path, tag: &str) -> Load {
    let html = fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let at = html.rfind("</body>").unwrap_or(html.len());
    let probed = format!(
        "{}{}{}",
        &html[..at],
        PROBE_JS.replace("MATHFONT", MATH_FONT),
        &html[at..]
    );
    let probe_page = page.with_file_name(format!("mbd-probe-{tag}.html"));
    fs::write(&probe_page, probed).unwrap();

    let profile = scratch.join(format!("profile-{tag}"));
    let _ = fs::remove_dir_all(&profile);
    let netlog = scratch.join(format!("netlog-{tag}.json"));
    let _ = fs::remove_file(&netlog);
    let dom = scratch.join(format!("dom-{tag}.html"));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--hide-scrollbars",
            // No name resolves: a request for anything off this machine cannot leave it, and
            // still shows in the network log.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1000,800",
            "--virtual-time-budget=15000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", probe_page.display()))
        .stdin(Stdio::null())
        .stdout(fs::File::create(&dom).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{}: Chromium did not finish within {RUN_LIMIT:?}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = fs::remove_file(&probe_page);
    let _ = fs::remove_dir_all(&profile);

    let dom = fs::read_to_string(&dom).unwrap();
    let open = "<pre id=\"mbd-probe\">";
    let json = dom
        .find(open)
        .map(|i| &dom[i + open.len()..])
        .and_then(|rest| rest.find("</pre>").map(|e| &rest[..e]))
        .unwrap_or_else(|| {
            panic!(
                "{}: the probe did not run (page never finished loading?)",
                page.display()
            )
        });
    let json = json
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let probe: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe output {json}: {e}"));
    let page_requests = page_requests(&fs::read_to_string(&netlog).unwrap_or_default());
    Load { probe, page_requests }
}

/// The URLs of the network requests a web page initiated, from a Chromium network log.
/// Chromium's own traffic (update checks and the like, which the resolver rules above stop)
/// carries the initiator "not an origin"; a page's requests carry the page's origin ("null" for
/// a file). Files read from disk never enter the network stack.
fn page_requests(netlog: &str) -> Vec<String> {
    let Ok(log) = serde_json::from_str::<Value>(netlog) else {
        // Chromium writes the log as it exits; a log cut short still lists its requests.
        return netlog
            .match_indices("\"initiator\":\"")
            .filter(|(i, _)| !netlog[i + 13..].starts_with("not an origin"))
            .map(|(i, _)| netlog[i..].chars().take(200).collect())
            .collect();
    };
    let mut out = Vec::new();
    for e in log["events"].as_array().into_iter().flatten() {
        let p = &e["params"];
        let (Some(init), Some(url)) = (p["initiator"].as_str(), p["url"].as_str()) else {
            continue;
        };
        if init != "not an origin" && !url.starts_with("file:") && !url.starts_with("data:") {
            out.push(format!("{url} (initiator {init})"));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn nums(v: &Value, field: &str) -> Vec<(String, f64)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|x| {
            let label = x
                .as_object()
                .and_then(|o| o.values().find_map(|v| v.as_str()))
                .unwrap_or("");
            (label.to_string(), x[field].as_f64().unwrap_or(f64::NAN))
        })
        .collect()
}

/// Problems of one loaded chapter, each a line naming the page.
fn page_problems(name: &str, l: &Load) -> Vec<String> {
    let p = &l.probe;
    let mut bad = Vec::new();
    let mut say = |s: String| bad.push(format!("{name}: {s}"));
    for e in p["math_empty"].as_array().into_iter().flatten() {
        say(format!("formula with zero size: {e}"));
    }
    // A dot or double dot adds about a quarter of the letter's height to the layout box, and
    // must be drawn with the math font: with a text font Chromium places the accent on the
    // letter, where at reading size it merges into it ("H q + C = tau"), although the box is
    // about as tall (measured: 1.24 times the letter without the font, 1.26 with it).
    for dot in p["dots"].as_array().into_iter().flatten() {
        let base = dot["base"].as_str().unwrap_or("?");
        let ratio = dot["ratio"].as_f64().unwrap_or(f64::NAN);
        let font = dot["font"].as_str().unwrap_or("?");
        if !(ratio > 1.15) {
            say(format!(
                "dotted {base} is {ratio:.2} times as tall as {base}: the dot is not drawn"
            ));
        }
        if font != MATH_FONT {
            say(format!(
                "the dot over {base} is drawn with {font}, not the book's math font"
            ));
        }
    }
    if p["dots"].as_array().is_some_and(|d| !d.is_empty()) && p["accents_covered"].as_bool() != Some(true) {
        say("the book's math font is not loaded with the dot accents".to_string());
    }
    // A stretched bracket spans its matrix (ratio near 1); an unstretched one is a single line.
    for (fence, ratio) in nums(&p["fences"], "ratio") {
        if !(ratio > 0.85) {
            say(format!(
                "bracket {fence} covers {:.0}% of its matrix: it does not stretch",
                100.0 * ratio
            ));
        }
    }
    let fonts: Vec<&str> = p["fonts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if p["math"].as_u64().unwrap_or(0) > 0 && !fonts.contains(&format!("{MATH_FONT}:loaded").as_str()) {
        say(format!("the book's math font did not load (fonts: {fonts:?})"));
    }
    for im in p["images"].as_array().into_iter().flatten() {
        // A slider's hidden frames must load; their size is checked below, frame by frame.
        let shown = im["zoom_copy"].as_bool() == Some(true)
            || im["slider"].as_bool() == Some(true)
            || (im["width"].as_f64().is_some_and(|w| w > 0.0) && im["height"].as_f64().is_some_and(|h| h > 0.0));
        let ok = im["complete"].as_bool() == Some(true) && im["natural"].as_f64().is_some_and(|w| w > 0.0) && shown;
        if !ok {
            say(format!("figure did not load or has no size: {im}"));
        }
    }
    for (k, fig) in p["sliders"].as_array().into_iter().flatten().enumerate() {
        let frames = fig["frames"].as_u64().unwrap_or(0);
        let steps = fig["steps"].as_array().map_or(&[][..], Vec::as_slice);
        if frames == 0 || steps.len() as u64 != frames {
            say(format!(
                "interactive figure {k}: {} slider values for {frames} frames",
                steps.len()
            ));
        }
        for st in steps {
            let v = st["value"].as_u64().unwrap_or(u64::MAX);
            let shown: Vec<u64> = st["shown"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .collect();
            if shown != [v] {
                say(format!(
                    "interactive figure {k}: at slider value {v} frames {shown:?} are shown"
                ));
            }
            if st["label"].as_str().is_none_or(|l| l.trim().is_empty()) {
                say(format!("interactive figure {k}: no label at slider value {v}"));
            }
        }
    }
    for r in p["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !(r.starts_with("file:") || r.starts_with("data:")) {
            say(format!("the page fetched {r}"));
        }
    }
    for r in &l.page_requests {
        say(format!("network request: {r}"));
    }
    bad
}

/// Decodes mdBook's `searchindex-*.js` (`JSON.parse('...')` with `\` and `'` escaped).
fn search_index(out: &Path) -> Value {
    let file = fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("searchindex") && n.ends_with(".js")
        })
        .expect("the book has a search index");
    let js = fs::read_to_string(&file).unwrap();
    let a = js.find("JSON.parse('").expect("search index format") + "JSON.parse('".len();
    let b = js.rfind("')").expect("search index format");
    let mut json = String::with_capacity(b - a);
    let mut chars = js[a..b].chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            json.extend(chars.next());
        } else {
            json.push(c);
        }
    }
    serde_json::from_str(&json).expect("search index is JSON")
}

/// TeX control words the book's formulas use; none may reach the text a search shows.
const TEX_WORDS: [&str; 28] = [
    "dot",
    "ddot",
    "frac",
    "mathbf",
    "begin",
    "end",
    "times",
    "sum",
    "left",
    "right",
    "text",
    "texttt",
    "operatorname",
    "qquad",
    "quad",
    "lambda",
    "tau",
    "omega",
    "hat",
    "bar",
    "mu",
    "nu",
    "partial",
    "sqrt",
    "cdot",
    "top",
    "bmatrix",
    "mathrm",
];

/// The first raw TeX in `text`: a control word from [`TEX_WORDS`], or a `$...$` span.
fn raw_tex(text: &str) -> Option<String> {
    let b = text.as_bytes();
    for (i, _) in text.match_indices('\\') {
        let word: String = text[i + 1..].chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        if TEX_WORDS.contains(&word.as_str()) {
            return Some(text[i..].chars().take(40).collect());
        }
    }
    // `$` ... `$` on one line with a TeX command or a braced sub/superscript between: unrendered
    // math (shell code such as `${X}` or `echo "$a" \ | sed 's/x_y/'` has neither).
    let dollars: Vec<usize> = (0..b.len()).filter(|&k| b[k] == b'$').collect();
    for w in dollars.windows(2) {
        let inner = &text[w[0] + 1..w[1]];
        let tex_word = inner
            .match_indices('\\')
            .any(|(k, _)| inner[k + 1..].chars().take_while(|c| c.is_ascii_alphabetic()).count() >= 2);
        if !inner.contains('\n') && inner.len() < 200 && (tex_word || inner.contains("_{") || inner.contains("^{")) {
            return Some(text[w[0]..=w[1]].to_string());
        }
    }
    None
}

#[test]
fn raw_tex_is_recognised() {
    assert!(raw_tex("so H(q) \\ddot q + C = tau").is_some());
    assert!(raw_tex("costs $x_1 + \\alpha^2$ here").is_some());
    assert!(raw_tex("H ( q ) q ¨ + C ( q , q ˙ ) = τ").is_none());
    assert!(raw_tex("OUT=${OUT:-/tmp/x}; echo $OUT\\n").is_none());
    assert!(raw_tex("echo \"$a\" \\ | sed 's/x_y/z/' > \"$b\"").is_none());
    assert!(raw_tex("at $q_{i}$").is_some());
}

#[test]
fn chapters_render_legibly_offline_in_chromium() {
    let Some(browser) = chromium() else {
        let msg = "\n\n==========================================================================\n\
             SKIPPED tests/browser.rs: no Chromium on this machine, so the book was NOT checked\n\
             in a browser (math legibility, figures, offline). Install it with\n\
             `apt-get install chromium` (or set MBD_CHROMIUM) and run again.\n\
             ==========================================================================\n";
        if std::env::var_os("CI").is_some() {
            panic!("{msg}(CI is set: a browser is required here; .ci/run installs it)");
        }
        // Straight to the process's stderr: the test harness captures `eprintln!` of a passing
        // test, which would make this skip silent.
        use std::io::Write as _;
        let _ = std::io::stderr().write_all(msg.as_bytes());
        return;
    };
    let started = Instant::now();
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("book");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser_tests");
    let _ = fs::remove_dir_all(&scratch);
    fs::create_dir_all(&scratch).unwrap();
    let out = scratch.join("book");
    let report = build(&book, Some(&out)).unwrap_or_else(|e| panic!("{e}"));

    // The search index: formulas appear as their symbols, never as TeX.
    let index = search_index(&out);
    let docs = index["index"]["documentStore"]["docs"]
        .as_object()
        .expect("search index has documents");
    assert!(docs.len() > 50, "only {} search documents", docs.len());
    let mut problems = Vec::new();
    for (id, doc) in docs {
        for (field, text) in doc.as_object().into_iter().flatten() {
            if let Some(tex) = text.as_str().and_then(raw_tex) {
                let url = index["doc_urls"][id.parse::<usize>().unwrap_or(0)]
                    .as_str()
                    .unwrap_or("?");
                problems.push(format!("search index, {url} ({field}): raw TeX `{tex}`"));
            }
        }
    }

    let (mut math, mut dots, mut fences, mut images, mut sliders) = (0, 0, 0, 0, 0);
    let mut slider_pages: Vec<(String, usize)> = Vec::new();
    let (mut dot_min, mut fence_min) = (f64::INFINITY, f64::INFINITY);
    for chapter in &report.chapters {
        let page = out.join(chapter.with_extension("html"));
        let name = chapter.display().to_string();
        let tag = chapter.file_stem().unwrap().to_string_lossy().to_string();
        let l = load(&browser, &page, &scratch, &tag);
        math += l.probe["math"].as_u64().unwrap_or(0);
        dots += l.probe["dots"].as_array().map_or(0, Vec::len);
        dot_min = nums(&l.probe["dots"], "ratio").iter().fold(dot_min, |m, x| m.min(x.1));
        fence_min = nums(&l.probe["fences"], "ratio")
            .iter()
            .fold(fence_min, |m, x| m.min(x.1));
        fences += l.probe["fences"].as_array().map_or(0, Vec::len);
        let here = l.probe["sliders"].as_array().map_or(0, Vec::len);
        sliders += here;
        slider_pages.push((tag.clone(), here));
        images += l.probe["images"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|im| im["zoom_copy"].as_bool() != Some(true))
            .count();
        problems.extend(page_problems(&name, &l));
    }
    println!(
        "{} chapters in {}: {math} formulas, {dots} dotted symbols (height / base >= {dot_min:.2}), \
         {fences} matrix brackets (height / matrix >= {fence_min:.2}), {images} figures checked in {:.1} s",
        report.chapters.len(),
        browser.display(),
        started.elapsed().as_secs_f64()
    );
    // Guards against a probe that silently measures nothing.
    assert!(
        math > 500 && dots > 50 && fences > 5,
        "too little math measured: {math} {dots} {fences}"
    );
    assert!(sliders >= 1, "no interactive figure was measured");
    // Every interactive figure the book has was stepped through: Baumgarte's T_stab in the
    // closed-loop chapter, SPOOK's tau and epsilon in the SPOOK chapter, solimp's impedance in the
    // soft-constraints chapter.
    for (page, want) in [("loops", 1), ("spook", 2), ("soft_constraints", 1)] {
        let got = slider_pages.iter().find(|(p, _)| p == page).map_or(0, |(_, n)| *n);
        assert!(
            got >= want,
            "{page}: {got} interactive figures measured, expected {want}"
        );
    }
    assert!(
        images >= report.figures.len(),
        "{images} images for {} figures",
        report.figures.len()
    );

    // The network check can fail: a page that asks for a remote image is caught.
    let leak = out.join("mbd-leak.html");
    fs::write(
        &leak,
        "<html><body><img src=\"http://example.invalid/x.png\"></body></html>",
    )
    .unwrap();
    let l = load(&browser, &leak, &scratch, "leak");
    assert!(
        page_problems("leak", &l).iter().any(|p| p.contains("example.invalid")),
        "a remote image was not reported: {:?}",
        l.page_requests
    );
    assert!(
        problems.is_empty(),
        "{} problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}
