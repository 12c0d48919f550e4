// Hindsight's TypeScript SDK: typed calls for the REST API, over fetch, no dependencies.
export { Hindsight } from "./client.js";
export type * from "./client.js";
export { APIError, TransportError, TRANSIENT_STATUSES } from "./transport.js";
export type { Call } from "./transport.js";
export type { components, paths } from "./schema.js";
