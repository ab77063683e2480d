import { TallyClient } from "../src/index.js";

/** A client without credentials whose fetch records each request and answers `body`. */
export function recording(body: unknown = {}): { tally: TallyClient; sent: Request[]; paths: () => string[] } {
  const sent: Request[] = [];
  const tally = new TallyClient({
    baseUrl: "http://tally.test",
    credentials: null,
    fetch: async (request) => {
      sent.push(request);
      return Response.json(body);
    },
  });
  return { tally, sent, paths: () => sent.map((request) => new URL(request.url).pathname) };
}
