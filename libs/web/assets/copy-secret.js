/* global document, window */
/*
 * The "Copy" button beside a secret shown once (a new API key, a new admin token): shown only where the clipboard
 * can be written. Loaded as a file: the CSP allows no inline script.
 */
(function () {
  'use strict';
  var buttons = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < buttons.length; i += 1) {
    (function (button) {
      var secret = document.getElementById(button.getAttribute('data-copy'));
      if (!secret || !window.navigator.clipboard) return;
      button.hidden = false;
      button.addEventListener('click', function () {
        window.navigator.clipboard.writeText(secret.textContent.trim()).then(function () {
          button.textContent = 'Copied';
        });
      });
    })(buttons[i]);
  }
})();
