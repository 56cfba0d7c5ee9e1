import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * The one rule for text taken from outside (docs/errors.md, "Text"): no control characters. Refused: C0 (U+0000 to
 * U+001F), DEL (U+007F) and C1 (U+0080 to U+009F), and lone surrogates (not well-formed Unicode). Only a field
 * whose text may run over several lines (a message, a note: `multiLine`) keeps tab, line feed and carriage return.
 * NUL is the sharpest of them: PostgreSQL refuses it in text (22021), which was a 500 for a value we had accepted.
 */
export interface PlainTextOptions {
  /** Tab, line feed and carriage return allowed (a message, a note). */
  multiLine?: boolean;
}

// eslint-disable-next-line no-control-regex -- the point is to refuse control characters
const SINGLE_LINE_CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
// eslint-disable-next-line no-control-regex -- the point is to refuse control characters
const MULTI_LINE_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

/** What is wrong with `text` (a phrase to follow the field's name), or undefined when it is plain text. */
export function plainTextProblem(text: string, { multiLine = false }: PlainTextOptions = {}): string | undefined {
  if (!text.isWellFormed()) return 'must be well-formed Unicode (no lone surrogates)';
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if ((multiLine ? MULTI_LINE_CONTROL : SINGLE_LINE_CONTROL).test(text))
    return multiLine
      ? 'must not contain control characters (other than tab and line breaks)'
      : 'must not contain control characters (such as NUL, a line break or a tab)';
  return undefined;
}

/** A string field under plainTextProblem's rule (a non-string is left to the field's type check). */
export function IsPlainText(options: PlainTextOptions = {}, validation?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPlainText',
      constraints: [options],
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || plainTextProblem(value, options) === undefined,
        defaultMessage: (args) =>
          `$property ${typeof args?.value === 'string' ? (plainTextProblem(args.value, options) ?? '') : ''}`.trim(),
      },
    },
    validation,
  );
}
