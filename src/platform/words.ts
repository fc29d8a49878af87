/** Names in a sentence, for messages and descriptions: `a`, `a or b`, `a, b or c`. */
export function eitherOf(names: readonly string[]): string {
  return names.length < 2
    ? (names[0] ?? '')
    : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}
