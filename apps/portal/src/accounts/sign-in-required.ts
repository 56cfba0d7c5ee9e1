/** A page of a signed-in account asked without one: the portal's exception filter answers 303 to the sign-in page. */
export class SignInRequired extends Error {
  constructor() {
    super('Sign in first.');
    this.name = 'SignInRequired';
  }
}

/**
 * A page of a signed-in account that has no consumer (key) yet, its address block's hourly cap reached: the portal's
 * exception filter answers 303 to the page that says when the key comes (/key).
 */
export class KeyPending extends Error {
  constructor() {
    super('Your API key is on its way.');
    this.name = 'KeyPending';
  }
}
