// Stands in for zod's `locales` barrel (zod/v4/locales/index.js) in the reference
// bundle (wrangler.jsonc `alias`). zod re-exports it as the namespace `z.locales`
// (and `z.core.locales`), and `import { z } from "zod"` keeps that whole namespace,
// so every language's error messages (~370 KB raw) rode along. Only English is
// ever used: zod configures it by default and @ai-sdk/provider-utils imports
// `zod/v4/locales/en.js` by name; nothing here calls `z.config(z.locales.xx())`.
// wrangler matches an alias key against the import specifier exactly, so the key
// `../locales/index.js` catches zod's own three imports of it (classic, mini, core);
// `npm run check:bundle` fails if another package's import of it ever does too.
export { default as en } from "zod/v4/locales/en.js";

function notBundled() {
  throw new Error("only zod's English messages are bundled in this deployment (wrangler.jsonc alias): no other locale is");
}
export {
  notBundled as ar,
  notBundled as az,
  notBundled as be,
  notBundled as bg,
  notBundled as bn,
  notBundled as ca,
  notBundled as ckb,
  notBundled as cs,
  notBundled as da,
  notBundled as de,
  notBundled as el,
  notBundled as eo,
  notBundled as es,
  notBundled as fa,
  notBundled as fi,
  notBundled as fr,
  notBundled as frCA,
  notBundled as gu,
  notBundled as he,
  notBundled as hi,
  notBundled as hr,
  notBundled as hu,
  notBundled as hy,
  notBundled as id,
  notBundled as is,
  notBundled as it,
  notBundled as ja,
  notBundled as ka,
  notBundled as kh,
  notBundled as km,
  notBundled as kn,
  notBundled as ko,
  notBundled as lt,
  notBundled as mk,
  notBundled as ms,
  notBundled as ne,
  notBundled as nl,
  notBundled as nn,
  notBundled as no,
  notBundled as ota,
  notBundled as ps,
  notBundled as pl,
  notBundled as pt,
  notBundled as ptBR,
  notBundled as ro,
  notBundled as ru,
  notBundled as sk,
  notBundled as sl,
  notBundled as sv,
  notBundled as ta,
  notBundled as tg,
  notBundled as th,
  notBundled as tk,
  notBundled as tr,
  notBundled as ua,
  notBundled as uk,
  notBundled as ur,
  notBundled as uz,
  notBundled as vi,
  notBundled as zhCN,
  notBundled as zhTW,
  notBundled as yo,
};
