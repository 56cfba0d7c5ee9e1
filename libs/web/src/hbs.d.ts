/** hbs ships no types; the part this library uses. */
declare module 'hbs' {
  const hbs: {
    registerPartial(name: string, template: string): void;
    registerHelper(name: string, fn: (...args: never[]) => unknown): void;
    handlebars: unknown;
  };
  export default hbs;
}
