// A file's text, as vite's `?raw` import gives it (a spec reading a doc it tests).
declare module "*?raw" {
  const text: string;
  export default text;
}
