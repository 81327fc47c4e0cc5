/** C files are imported as their text (see sources.ts). */
declare module '*.c' {
  const text: string;
  export default text;
}
