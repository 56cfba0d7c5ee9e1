/* global document, window */
/*
 * Keeps a newly shown key in this tab's sessionStorage (never sent to the portal's server again), for the API
 * reference page (the "Copy" button is libs/web's copy-secret.js). Loaded as a file: the CSP allows no inline script.
 */
(function () {
  'use strict';
  var shown = document.querySelector('[data-testid="new-key"]');
  if (shown) {
    try {
      window.sessionStorage.setItem('portal.apiKey', shown.textContent.trim());
    } catch {
      /* storage off: the reference page asks */
    }
  }
})();
