import { createMiddleware } from "hono/factory";
import { ErrorCode, RpcError, invalidParams, invalidRequest } from "../a2a/errors.js";
import { requestOf } from "../a2a/methods.js";
import { readProtoNames } from "../a2a/proto-names.js";
import { matchRestRoute, type RestMatch } from "../a2a/rest-routes.js";
import { A2A_REST_PATH } from "../a2a/wire.js";
import type { Binding, EdgeHono } from "./context.js";
import type { EdgeEnv } from "./options.js";
import { EdgeRefusal } from "./request-steps.js";
import { restErrorResponse, restResult } from "./responses.js";

type Route = Extract<RestMatch, { kind: "route" }>;

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** A member defined as JSON.parse defines it: a field `__proto__` stays a field. */
const put = (target: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/**
 * HTTP+JSON under `/a2a/rest/{tenant}` (docs/protocol.md "HTTP+JSON"): the
 * route names the method, its path the tenant and ids, the query and a
 * POST's JSON body the other fields; a result is the JSON-RPC binding's
 * `result`, an error AIP-193's body, a stream event the bare StreamResponse.
 */
function restBinding(route: Route | undefined): Binding {
  return {
    // GET and DELETE carry no body; an empty POST (a cancel, a subscribe) carries none either.
    hasBody: (request) => request.method === "POST" && request.body !== null && request.headers.get("Content-Length") !== "0",
    readCall(c, body) {
      let fields: Record<string, unknown> = {};
      if (body !== undefined && body.trim() !== "") {
        let value: unknown;
        try {
          value = JSON.parse(body);
        } catch {
          return { ok: false, error: new RpcError(ErrorCode.PARSE_ERROR, "Parse error: the body is not valid JSON") };
        }
        if (!isPlainObject(value)) return { ok: false, error: invalidRequest("Invalid request: the body must be a JSON object, the method's request message") };
        fields = value;
      }
      const query = queryOf(new URL(c.req.url));
      const named = [fields, query].filter((source) => Object.hasOwn(source, "tenant")).map((source) => source.tenant);
      // Only a matched route gets this far (the route step refused the rest).
      const { method, tenant } = route!;
      return { ok: true, call: { id: null, method, tenants: [tenant, ...named], params: () => paramsOf(route!, query, fields) } };
    },
    result: (_call, result) => restResult(result),
    eventData: (_call, eventJson) => eventJson,
    error: (_c, error, status, headers) => restErrorResponse(error, status, headers),
  };
}

/** The query string as flat fields: a name given more than once is a list (which a scalar field then refuses). */
function queryOf(url: URL): Record<string, unknown> {
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of url.searchParams) {
    const seen = fields.get(name);
    fields.set(name, seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]);
  }
  return Object.fromEntries(fields);
}

/**
 * The method's params, as JSON-RPC's would be: the query's and the body's
 * fields by their JSON names (either proto-JSON name accepted; an
 * extension's method's as sent), then the path's. A field in both the query and the body, or one the path names
 * differently, is -32602: neither value is dropped unseen.
 */
function paramsOf(route: Route, query: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const request = requestOf(route.method);
  const params = request ? readProtoNames(query, request, "query") : { ...query };
  for (const [name, value] of Object.entries(request ? readProtoNames(body, request, "body") : body)) {
    if (Object.hasOwn(params, name)) throw invalidParams(`Invalid params: ${name} is given in both the query and the body: send it once`);
    put(params, name, value);
  }
  for (const [name, value] of Object.entries(route.pathParams)) {
    if (Object.hasOwn(params, name) && params[name] !== value) {
      throw invalidParams(`Invalid params: ${name} ${JSON.stringify(params[name])} differs from the path's ${JSON.stringify(value)}`);
    }
    put(params, name, value);
  }
  // Step 7 let the request through only when every tenant it names is the path's.
  return put(params, "tenant", route.tenant);
}

/**
 * The HTTP+JSON binding's route, right after the token (docs/protocol.md
 * "The edge, in order"): a path no route of the table matches, with or
 * without its `{tenant}`, is 404; a known path with another verb is 405
 * with `Allow`. Both before any other step, and nothing is read.
 */
export const restRouteStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const path = new URL(c.req.url).pathname;
    const match = matchRestRoute(c.req.method, path.slice(A2A_REST_PATH.length));
    c.set("binding", restBinding(match.kind === "route" ? match : undefined));
    if (match.kind === "none") throw new EdgeRefusal("route", 404, new RpcError(ErrorCode.METHOD_NOT_FOUND, `No HTTP+JSON route for ${c.req.method} ${path}`));
    if (match.kind === "verb") {
      const allow = match.allow.join(", ");
      throw new EdgeRefusal("route", 405, new RpcError(ErrorCode.METHOD_NOT_FOUND, `${c.req.method} is not allowed on ${path}: use ${allow}`), {
        Allow: allow,
      });
    }
    await next();
  });
