import { plainTextProblem } from '@app/contract';

/**
 * The house's one rule for text (libs/contract's plainTextProblem, the admin API's @IsPlainText) as a form says it:
 * the sentence shown next to the field, the page shown again with what was typed (docs/errors.md, "Text").
 */
export const FORM_TEXT_ERRORS = {
  line: 'Use one line of ordinary text: no tabs, line breaks or invisible control characters.',
  lines: 'Use ordinary text: no invisible control characters (line breaks and tabs are fine).',
} as const;

/** The field's sentence when `text` breaks the rule; undefined when it is plain text. */
export function formTextError(text: string, { multiLine = false }: { multiLine?: boolean } = {}): string | undefined {
  if (plainTextProblem(text, { multiLine }) === undefined) return undefined;
  return multiLine ? FORM_TEXT_ERRORS.lines : FORM_TEXT_ERRORS.line;
}
