import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { IsPlainText, plainTextProblem } from './plain-text';

describe('plainTextProblem', () => {
  it('takes text of any script, emoji and punctuation', () => {
    for (const text of ['Invoice 2026-0042 paid', 'Überweisung – 42 €', '請求書', 'ok 👍', ' spaced '])
      expect(plainTextProblem(text)).toBeUndefined();
  });

  it.each([
    ['NUL', 'a\u0000b', 'must not contain NUL characters'],
    ['a line feed', 'a\nb', 'must not contain control characters (such as NUL, a line break or a tab)'],
    ['a carriage return', 'a\rb', 'control characters'],
    ['a tab', 'a\tb', 'control characters'],
    ['ESC', 'a\u001b[31mb', 'control characters'],
    ['DEL', 'a\u007fb', 'control characters'],
    ['a C1 control (NEL)', 'a\u0085b', 'control characters'],
    ['a lone surrogate', 'a\ud800b', 'well-formed Unicode'],
  ])('refuses %s on one line', (_what, text, message) => {
    expect(plainTextProblem(text)).toContain(message);
  });

  it('keeps tab and line breaks where text runs over several lines, and nothing else', () => {
    expect(plainTextProblem('line one\r\nline two\tend', { multiLine: true })).toBeUndefined();
    expect(plainTextProblem('a\u0000b', { multiLine: true })).toBe('must not contain NUL characters');
    expect(plainTextProblem('a\u000bb', { multiLine: true })).toContain('control characters');
    expect(plainTextProblem('a\u007fb', { multiLine: true })).toContain('control characters');
  });
});

describe('IsPlainText', () => {
  class Body {
    @IsPlainText()
    reason!: unknown;
  }
  const messages = (value: unknown) =>
    validateSync(plainToInstance(Body, { reason: value })).flatMap((e) => Object.values(e.constraints ?? {}));

  it('names the field, and leaves a non-string to the type check', () => {
    expect(messages('fine')).toEqual([]);
    expect(messages('bad\u0000')).toEqual(['reason must not contain NUL characters']);
    expect(messages(42)).toEqual([]);
  });
});
