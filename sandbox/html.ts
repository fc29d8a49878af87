/** What the simulated upstreams' pages share: escaping text into HTML and showing amounts. */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** 1234 fen → "12.34", without floating point. */
export function formatYuan(fen: number): string {
  return `${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`;
}
