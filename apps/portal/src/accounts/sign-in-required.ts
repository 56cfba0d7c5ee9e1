/** A page of a signed-in account asked without one: the portal's exception filter answers 303 to the sign-in page. */
export class SignInRequired extends Error {
  constructor() {
    super('Sign in first.');
    this.name = 'SignInRequired';
  }
}
