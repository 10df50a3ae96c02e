// Loads the console's modules. When one of them fails to arrive (browsers abort requests in
// flight when the machine's network changes, and a daemon restarting answers nothing for a
// moment), the page would stay on its loading message: it is reloaded, twice at most, then
// says what failed and what to do.
(() => {
  const ATTEMPTS_KEY = 'slipway.loadAttempts';
  const MAX_RELOADS = 2;
  const script = document.createElement('script');
  script.type = 'module';
  script.src = '/console/js/console/browser/main.js';
  script.addEventListener('load', () => sessionStorage.removeItem(ATTEMPTS_KEY));
  script.addEventListener('error', () => {
    const reloads = Number(sessionStorage.getItem(ATTEMPTS_KEY) ?? '0');
    if (reloads < MAX_RELOADS) {
      sessionStorage.setItem(ATTEMPTS_KEY, String(reloads + 1));
      window.setTimeout(() => window.location.reload(), 300 * (reloads + 1));
      return;
    }
    sessionStorage.removeItem(ATTEMPTS_KEY);
    const explain = () => {
      const main = document.getElementById('main');
      if (main)
        main.textContent =
          "The console's scripts could not be loaded. Check that the slipway daemon is running and reload the page; if this keeps happening, run `npm run build` in the slipway folder.";
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', explain);
    else explain();
  });
  document.head.append(script);
})();
