/** What the simulated upstreams' pages share: escaping text into HTML and showing amounts. */

export { escapeHtml } from '../src/platform/http/html';

/** 1234 fen → "12.34", without floating point. */
export function formatYuan(fen: number): string {
  return `${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`;
}

/** The look the simulated checkout pages share; `accent` colours the Pay button, `extra` adds rules. */
export function checkoutStyle(accent: string, extra = ''): string {
  return `
  body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.2rem; color: #555; }
  .amount { font-size: 2.4rem; margin: 0.5rem 0 1.5rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: 0.3rem 1rem; font-size: 0.9rem; }
  dt { color: #777; }
  form { display: inline; }
  button { font-size: 1rem; padding: 0.6rem 1.2rem; margin: 1rem 0.5rem 0 0; border-radius: 6px; border: 1px solid #999; cursor: pointer; }
  button.pay { background: ${accent}; color: #fff; border-color: ${accent}; }
${extra}`;
}
