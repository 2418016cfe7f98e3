import { AgentCard, type AgentSkill } from "@a2a-js/sdk";
import { z } from "zod";
import { ConfigError } from "../errors/index.js";
import { PROGRESS_CARD_EXTENSION } from "./progress.js";
import { ERASURE_EXTENSION, IDENTITY_CLAIM, TENANT_CLAIM } from "./wire.js";

/**
 * What an agent author writes about a tenant. The edge adds what only it
 * knows: the interface URL, the tenant id and the platform's capabilities.
 */
export interface AgentManifest {
  name: string;
  description: string;
  version: string;
  skills: Array<Pick<AgentSkill, "id" | "name" | "description" | "tags"> & Partial<Pick<AgentSkill, "examples">>>;
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
}

const nonEmpty = z.string().trim().min(1);

// Every REQUIRED card field must be non-empty in a served card: verifiers
// disagree on whether an empty one belongs in the signed bytes (a2a-js #627,
// A2A #2122), so a card that avoids them verifies under every reading.
const manifestSchema = z.object({
  name: nonEmpty,
  description: nonEmpty,
  version: nonEmpty,
  skills: z
    .array(
      z.object({
        id: nonEmpty,
        name: nonEmpty,
        description: nonEmpty,
        tags: z.array(nonEmpty).min(1),
        examples: z.array(nonEmpty).optional(),
      }),
    )
    .min(1),
  provider: z.object({ organization: nonEmpty, url: z.url() }).optional(),
  documentationUrl: z.url().optional(),
  iconUrl: z.url().optional(),
  defaultInputModes: z.array(nonEmpty).min(1).optional(),
  defaultOutputModes: z.array(nonEmpty).min(1).optional(),
});

/**
 * Checks a manifest when the Worker is built: the deployment's stub card
 * (`tenant` undefined) or a tenant's card.
 */
export function validateManifest(manifest: AgentManifest, tenant?: string): AgentManifest {
  const result = manifestSchema.safeParse(manifest);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const [name, label] = tenant === undefined ? ["deployment", "the deployment (stub card)"] : [`tenants.${tenant}`, `tenant ${JSON.stringify(tenant)}`];
    throw new ConfigError({ kind: "manifest", name }, `The card manifest of ${label} is invalid at ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return manifest;
}

export interface CardContext {
  /** `<origin>/a2a`: the JSON-RPC interface. */
  endpoint: string;
  /** `<origin>/a2a/rest`: the HTTP+JSON interface, listed after JSON-RPC's; none when absent. */
  restEndpoint?: string;
  /** Omitted for the deployment's stub card. */
  tenant?: string;
}

/** The name the cards give the gatekeeper's bearer JWT in `securitySchemes`. */
const BEARER_SCHEME = "gatekeeperJwt";

/**
 * A oneof in proto-JSON: its one member names the kind. It survives the SDK's
 * verifier given wire JSON; a card the SDK already decoded loses it.
 */
const SECURITY_SCHEMES = { [BEARER_SCHEME]: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } } };

/**
 * Its role list must not be empty: the encoder would leave `{}`, which the
 * SDK's canonical form drops and plain JCS keeps (docs/protocol.md "Card
 * signatures"). The roles named are the claims the token carries ("The gatekeeper token").
 */
const SECURITY_REQUIREMENTS = [{ schemes: { [BEARER_SCHEME]: { list: [TENANT_CLAIM, IDENTITY_CLAIM] } } }];

/**
 * The unsigned wire JSON of a card for `manifest` served at `endpoint`: the
 * manifest, the interface, the platform's capabilities and how to
 * authenticate, through the SDK's `fromJSON → toJSON` so the card is its own
 * proto-JSON image.
 */
export function buildCardWire(manifest: AgentManifest, context: CardContext): Record<string, unknown> {
  const card = AgentCard.fromJSON({
    name: manifest.name,
    description: manifest.description,
    version: manifest.version,
    // JSON-RPC first: the card's preferred interface (A2A §5.2).
    supportedInterfaces: [
      { url: context.endpoint, protocolBinding: "JSONRPC" },
      ...(context.restEndpoint === undefined ? [] : [{ url: context.restEndpoint, protocolBinding: "HTTP+JSON" }]),
    ].map((entry) => ({ ...entry, ...(context.tenant === undefined ? {} : { tenant: context.tenant }), protocolVersion: "1.0" })),
    provider: manifest.provider,
    documentationUrl: manifest.documentationUrl,
    iconUrl: manifest.iconUrl,
    // The platform's own extensions, none required: a client that knows none of them loses nothing (docs/protocol.md "Progress", "Erasure").
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: true,
      extensions: [PROGRESS_CARD_EXTENSION, { uri: ERASURE_EXTENSION, required: false }],
    },
    securitySchemes: SECURITY_SCHEMES,
    securityRequirements: SECURITY_REQUIREMENTS,
    defaultInputModes: manifest.defaultInputModes ?? ["text/plain"],
    defaultOutputModes: manifest.defaultOutputModes ?? ["text/plain"],
    skills: manifest.skills,
  });
  return AgentCard.toJSON(card) as Record<string, unknown>;
}
