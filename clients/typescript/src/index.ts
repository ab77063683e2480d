export { TallyClient, type TallyOptions } from "./client.js";
export type * from "./client.js";
export { CredentialsError, TallyError, TransportError, GATEWAY_CODES, GATEWAY_OTHER } from "./errors.js";
export { DEFAULT_RETRY, type RetryPolicy, waitBefore } from "./retry.js";
export { ROUTES, type RouteName } from "./routes.js";
export { SERVICE, type Credentials, type TokenProvider } from "./signing.js";
export type { components, paths } from "./schema.js";
