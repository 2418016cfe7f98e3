import { AgentCard } from "@a2a-js/sdk";
import { jcs } from "./jcs.js";

/**
 * The fields A2A's `a2a.proto` marks `(google.api.field_behavior) = REQUIRED`
 * inside an AgentCard, with the value each takes when it is empty. §8.4.1
 * rule 1 keeps these in the signed form even at their default, while the
 * proto-JSON encoder (and `@a2a-js/sdk`'s canonicalizer, a2a-js #627) drops
 * them; this table is what puts them back.
 */
type Shape = {
  required?: Record<string, () => unknown>;
  messages?: Record<string, Shape>;
  lists?: Record<string, Shape>;
  maps?: Record<string, Shape>;
};

const str = () => "";
const list = () => [];
const obj = () => ({});

const flow: Shape = { required: { tokenUrl: str, scopes: obj } };
const SECURITY_SCHEME: Shape = {
  messages: {
    apiKeySecurityScheme: { required: { location: str, name: str } },
    httpAuthSecurityScheme: { required: { scheme: str } },
    oauth2SecurityScheme: {
      required: { flows: obj },
      messages: {
        flows: {
          messages: {
            authorizationCode: { required: { authorizationUrl: str, tokenUrl: str, scopes: obj } },
            clientCredentials: flow,
            deviceCode: { required: { deviceAuthorizationUrl: str, tokenUrl: str, scopes: obj } },
          },
        },
      },
    },
    openIdConnectSecurityScheme: { required: { openIdConnectUrl: str } },
  },
};

const AGENT_CARD: Shape = {
  required: {
    name: str,
    description: str,
    supportedInterfaces: list,
    version: str,
    capabilities: obj,
    defaultInputModes: list,
    defaultOutputModes: list,
    skills: list,
  },
  messages: { provider: { required: { url: str, organization: str } } },
  lists: {
    supportedInterfaces: { required: { url: str, protocolBinding: str, protocolVersion: str } },
    skills: { required: { id: str, name: str, description: str, tags: list } },
  },
  maps: { securitySchemes: SECURITY_SCHEME },
};

function restoreRequired(value: Record<string, unknown>, shape: Shape): void {
  for (const [field, empty] of Object.entries(shape.required ?? {})) {
    if (value[field] === undefined) value[field] = empty();
  }
  for (const [field, child] of Object.entries(shape.messages ?? {})) {
    const nested = value[field];
    if (isRecord(nested)) restoreRequired(nested, child);
  }
  for (const [field, child] of Object.entries(shape.lists ?? {})) {
    const items = value[field];
    if (Array.isArray(items)) for (const item of items) if (isRecord(item)) restoreRequired(item, child);
  }
  for (const [field, child] of Object.entries(shape.maps ?? {})) {
    const entries = value[field];
    if (isRecord(entries)) for (const item of Object.values(entries)) if (isRecord(item)) restoreRequired(item, child);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * The bytes an AgentCard signature covers (A2A §8.4.1): the card's proto-JSON
 * wire form, which drops unknown members and unset defaults while keeping set
 * `optional` fields; REQUIRED fields restored at their defaults; `signatures`
 * removed; serialized with RFC 8785. `card` is wire JSON, as `@a2a-js/sdk`'s
 * verifier must be given it too: decoding an already decoded card drops its
 * oneofs (a security scheme), so both would sign a card without them.
 */
export function canonicalCardPayload(card: unknown): string {
  const wire = AgentCard.toJSON(AgentCard.fromJSON(card)) as Record<string, unknown>;
  delete wire.signatures;
  restoreRequired(wire, AGENT_CARD);
  return jcs(wire);
}
