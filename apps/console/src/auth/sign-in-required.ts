/** No operator in the session: the page redirects to the sign-in page. */
export class SignInRequired extends Error {
  constructor() {
    super('Sign in first.');
    this.name = 'SignInRequired';
  }
}
