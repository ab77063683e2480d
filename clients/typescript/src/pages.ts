/**
 * Lists, page by page: a cursor followed until it is `null`, and the period of a period's
 * list held from its first page on.
 */

/**
 * `fetchPage` for the pages of a period's list (its orders, its audit), each page after
 * the first asked for the period the first answered when `period` is not given: a cursor
 * goes on only in its period, and the current one may end between two pages
 * (`400 invalid_cursor`).
 */
export function inOnePeriod<P extends { period: string }>(
  period: string | undefined,
  fetchPage: (period: string | undefined, cursor: string | undefined) => Promise<P>,
): (cursor: string | undefined) => Promise<P> {
  return async (cursor) => {
    const page = await fetchPage(period, cursor);
    period ??= page.period;
    return page;
  };
}

/** Every page of a list, following `cursor` until it is `null`. */
export async function* pages<P>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  next: (page: P) => string | null | undefined,
): AsyncGenerator<P> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield page;
    cursor = next(page) ?? undefined;
  } while (cursor !== undefined);
}
