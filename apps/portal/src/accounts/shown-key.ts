/**
 * The session's one-time secret of /keys/new (holdShownOnce/takeShownOnce): every new key, the first one too (made
 * by "Verify my email", a first sign-in or "Get my API key"; `details.welcome` then), is held there by a POST and
 * shown by the GET its 303 leads to.
 */
export const SHOWN_KEY = 'portal.key';
