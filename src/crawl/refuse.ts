// A 400 naming the request body's field: what the crawl, batch scrape and extract starts refuse.
import { BadRequestError } from '../errors.ts';

export function refuse(field: string, message: string): never {
  throw new BadRequestError(`Invalid request: body.${field}: ${message}`, [{ path: `body.${field}`, message }]);
}
