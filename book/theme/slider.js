// Interactive figures whose parameter is the lesson. A figure is
//
//   <figure class="mbd-slider">
//     <img src="figures/NAME_0.svg" data-value="T = 1 s" alt="..." hidden>   (one per value)
//     ...
//     <figcaption><input type="range" min="0" max="N-1" value="K"> <output></output> ...</figcaption>
//   </figure>
//
// with every frame precomputed at build time (`mbd book`), so the page needs no server and no
// network: the slider only chooses which of the images is shown. Without JavaScript the frame
// that is not `hidden` (the default one) is shown. `mbd book` checks that every frame exists and
// that the range matches the images; tests/browser.rs steps through every value.
(function () {
  function setUp(fig) {
    var input = fig.querySelector('input[type="range"]');
    var output = fig.querySelector('output');
    var frames = fig.querySelectorAll('img');
    if (!input || frames.length === 0) return;
    function show() {
      var k = Math.min(frames.length - 1, Math.max(0, Number(input.value)));
      frames.forEach(function (im, i) { im.hidden = (i !== k); });
      if (output) output.textContent = frames[k].getAttribute('data-value') || '';
    }
    input.addEventListener('input', show);
    show();
  }
  function all() { document.querySelectorAll('figure.mbd-slider').forEach(setUp); }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', all);
  } else {
    all();
  }
})();
