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
