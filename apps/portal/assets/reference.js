/* global document, window, SwaggerUIBundle */
/*
 * The API reference page: Swagger UI over the gateway's document, authorised with the key last shown on this
 * portal in this browser tab (kept in sessionStorage by portal.js, never on the server), so "Try it out" works at once.
 */
(function () {
  'use strict';
  var root = document.getElementById('swagger-ui');
  if (!root || typeof SwaggerUIBundle !== 'function') return;
  var key = null;
  try {
    key = window.sessionStorage.getItem('portal.apiKey');
  } catch {
    key = null;
  }
  var ui = SwaggerUIBundle({
    url: root.getAttribute('data-spec-url'),
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    tryItOutEnabled: true,
    onComplete: function () {
      if (key) ui.preauthorizeApiKey('bearer', key);
    },
  });
  var status = document.getElementById('reference-key-status');
  if (status) {
    status.textContent = key
      ? 'Authorised with your key ' + key.slice(0, 9) + '…: "Try it out" works at once.'
      : 'No key in this tab yet: create or rotate a key on your dashboard (the new key is used here), or press "Authorize" and paste one.';
  }
})();
