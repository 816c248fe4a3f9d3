import { Eta } from 'eta';
import { VIEW_FILES } from './inbox-files.js';

/**
 * The inbox's eta templates, compiled once at start (a broken one stops the start and the release build). Every
 * `<%= %>` escapes; `<%~ %>` (unescaped) is for HTML a template itself rendered, as the layout's `it.body`.
 */
export class InboxViews {
  private readonly eta = new Eta({ autoEscape: true, autoTrim: [false, 'nl'], cache: true, useWith: false });
  readonly names: ReadonlySet<string>;

  constructor(files: Readonly<Record<string, string>> = VIEW_FILES) {
    const names = new Set<string>();
    for (const [file, source] of Object.entries(files)) {
      const name = file.replace(/\.eta$/, '');
      this.eta.loadTemplate(`@${name}`, source);
      names.add(name);
    }
    this.names = names;
  }

  render(view: string, data: object): string {
    if (!this.names.has(view)) throw new Error(`inbox view ${view} does not exist (src/inbox/views/${view}.eta)`);
    return this.eta.render(`@${view}`, data);
  }
}
