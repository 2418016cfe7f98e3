import { AgentCard, type AgentSkill } from "@a2a-js/sdk";
import { z } from "zod";
import { ConfigError } from "../errors/index.js";

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
  /** `<origin>/a2a` */
  endpoint: string;
  /** Omitted for the deployment's stub card. */
  tenant?: string;
}

/**
 * The unsigned wire JSON of a card for `manifest` served at `endpoint`.
 *
 * It declares no `securitySchemes`: `@a2a-js/sdk` 1.3's verifier re-decodes an
 * already decoded card, which silently drops oneof fields (a security scheme
 * is one), so a card carrying one fails verification there. How to
 * authenticate is for the deployment's manifest to say in its description.
 */
export function buildCardWire(manifest: AgentManifest, context: CardContext): Record<string, unknown> {
  const card = AgentCard.fromJSON({
    name: manifest.name,
    description: manifest.description,
    version: manifest.version,
    supportedInterfaces: [
      {
        url: context.endpoint,
        protocolBinding: "JSONRPC",
        ...(context.tenant === undefined ? {} : { tenant: context.tenant }),
        protocolVersion: "1.0",
      },
    ],
    provider: manifest.provider,
    documentationUrl: manifest.documentationUrl,
    iconUrl: manifest.iconUrl,
    capabilities: { streaming: false, pushNotifications: true, extendedAgentCard: true },
    defaultInputModes: manifest.defaultInputModes ?? ["text/plain"],
    defaultOutputModes: manifest.defaultOutputModes ?? ["text/plain"],
    skills: manifest.skills,
  });
  return AgentCard.toJSON(card) as Record<string, unknown>;
}
