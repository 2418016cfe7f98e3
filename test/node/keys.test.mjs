// `npm run keys` (scripts/keys.mjs): the kid of a fresh signing key.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { base64url, calculateJwkThumbprint } from "jose";
import { describe, expect, it } from "vitest";
import { freshSigningJwk } from "../../scripts/keys.mjs";

const KID = /^a2a-(\d{4}-\d{2}-\d{2})-([0-9a-f]{8})$/;

describe("npm run keys", () => {
  it("gives two keys made the same day different kids, each a2a-YYYY-MM-DD-<8 hex>", async () => {
    const day = new Date("2026-11-29T10:00:00Z");
    const [a, b] = [await freshSigningJwk(day), await freshSigningJwk(day)];
    expect(a.kid).toMatch(KID);
    expect(b.kid).toMatch(KID);
    expect(a.kid.startsWith("a2a-2026-11-29-")).toBe(true);
    expect(a.kid).not.toBe(b.kid);
  });

  it("takes the 8 hex from the RFC 7638 thumbprint of the public key", async () => {
    const jwk = await freshSigningJwk();
    const thumbprint = base64url.decode(await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, "sha256"));
    expect(KID.exec(jwk.kid)?.[2]).toBe(Buffer.from(thumbprint).toString("hex").slice(0, 8));
  });

  it("prints one private JWK when run as a script", async () => {
    const script = fileURLToPath(new URL("../../scripts/keys.mjs", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [script]);
    const jwk = JSON.parse(stdout);
    expect(Object.keys(jwk).sort()).toEqual(["crv", "d", "kid", "kty", "x"]);
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    expect(jwk.kid).toMatch(KID);
  });
});
