import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Problem } from './problem.js';

/** How a module answers errors under its own paths when its clients expect more than RFC 9457 (OAuth, for one). */
export interface ProblemFormat {
  /**
   * The body (an object is sent as JSON, a string as it is), media type (without charset) and, when it is not the
   * problem's, status of the answer; may set headers on `res`.
   */
  render(problem: Problem, req: Request, res: Response): { body: object | string; mediaType: string; status?: number };
}

/**
 * The formats modules register for their path prefixes, asked by the problem filter for every error; a path no
 * format claims is answered with the problem alone.
 */
@Injectable()
export class ProblemFormats {
  private readonly formats: { prefix: string; format: ProblemFormat }[] = [];

  /** `pathPrefix` in lower case: express matches routes in any case, so the path is compared lower-cased. */
  register(pathPrefix: string, format: ProblemFormat): void {
    this.formats.push({ prefix: pathPrefix, format });
  }

  forPath(path: string): ProblemFormat | undefined {
    const lower = path.toLowerCase();
    return this.formats.find(({ prefix }) => lower.startsWith(prefix))?.format;
  }
}
