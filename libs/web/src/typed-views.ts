import { Render } from '@nestjs/common';
import type { Response } from 'express';

/** What every page's model gives the layout: its title, and whether the chart scripts load. */
export interface PageModel {
  title: string;
  chart?: boolean;
}

/** An app's templates and the model each one takes: `{ dashboard: DashboardView; ... }`. */
export type ViewModels<Views> = { [Name in keyof Views]: PageModel };

type Returning<M> = (...args: never[]) => M | Promise<M>;

/**
 * An app's typed `@Render`: `const Page = typedRender<PortalViews>()`, then `@Page('dashboard')` on a handler whose
 * return type must be the template's model. A missing or misspelt field fails `npm run typecheck`, not a page.
 */
export function typedRender<Views extends ViewModels<Views>>() {
  return <Name extends keyof Views & string>(view: Name) =>
    <Handler extends Returning<Views[Name]>>(
      target: object,
      key: string | symbol,
      descriptor: TypedPropertyDescriptor<Handler>,
    ): void => {
      Render(view)(target, key, descriptor);
    };
}

/**
 * The same check for a handler that must answer with a status of its own (a form shown again with 400 or 409):
 * `const renderView = typedRenderer<PortalViews>()`, then `renderView(response, 'plan', model, 400)`.
 */
export function typedRenderer<Views extends ViewModels<Views>>() {
  return <Name extends keyof Views & string>(response: Response, view: Name, model: Views[Name], status = 200): void =>
    response.status(status).render(view, model);
}

/**
 * A form refused before its handler ran (a pipe's check of the body, as a DTO's ValidationPipe would): the app's
 * exception filter (WebExceptionFilter, or an app's own that falls back to it) renders `view` with `model` and
 * `status`, so the page comes back with the errors next to the fields and what was typed.
 */
export class FormRefused extends Error {
  constructor(
    readonly view: string,
    readonly model: PageModel,
    readonly status: number,
  ) {
    super(`The ${view} form was refused.`);
    this.name = 'FormRefused';
  }
}

/**
 * The typed way to refuse a form: `const refuseForm = typedFormRefusal<AppViews>()`, then in a pipe
 * `throw refuseForm('signup', model)` (400 unless told): the model is checked against the template's like `@Page`'s.
 */
export function typedFormRefusal<Views extends ViewModels<Views>>() {
  return <Name extends keyof Views & string>(view: Name, model: Views[Name], status = 400): FormRefused =>
    new FormRefused(view, model, status);
}
